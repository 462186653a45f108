import { BatchClient, hasEnded } from "../batch-client.js";
import { batchDetails, batchStatus, batchTable } from "../batch-view.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { usageError } from "../exit-codes.js";
import { registerCreateBatch } from "./create-batch.js";

/** create (create-batch.ts), get, list and cancel batch: the account's batches (OpenAI's batches API). */
export function registerBatchCommands(verbs: Verbs): void {
  registerCreateBatch(verbs);
  const { get, list, cancel } = verbs;

  examples(
    get
      .command("batch")
      .description("Show a batch: its status, its requests' progress, its output and error files")
      .argument("<batch_id>")
      .option("--wait", "show its progress until it ends; Ctrl-C stops the waiting, not the batch")
      .action(withContext(getBatch)),
    [
      "hearth get batch batch_0c3f…",
      "hearth get batch batch_0c3f… --wait",
      "hearth get batch batch_0c3f… --output json",
    ],
  );

  examples(
    list
      .command("batches")
      .description("List the account's batches, newest first: ID, status, endpoint, progress, created")
      .option("--limit <n>", "batches to show (1–100)", "20")
      .option("--after <batch_id>", "the page after this batch (the last ID of the previous page)")
      .action(withContext(listBatches)),
    [
      "hearth list batches",
      "hearth list batches --limit 100 --output json",
      "hearth list batches --quiet   # IDs only",
    ],
  );

  examples(
    cancel
      .command("batch")
      .description("Cancel a batch: no new request starts; what ran stays in its output and error files")
      .argument("<batch_id>")
      .option("--wait", "wait until it is cancelled")
      .action(withContext(cancelBatch)),
    ["hearth cancel batch batch_0c3f…", "hearth cancel batch batch_0c3f… --wait"],
  );
}

async function getBatch(ctx: CliContext, batchId: string, options: { wait?: boolean }): Promise<void> {
  const client = new BatchClient(ctx.client());
  const batch = await client.getBatch(batchId);
  if (options.wait) {
    const { reportEndedBatch, waitForBatch } = await import("../batch-wait.js");
    return reportEndedBatch(ctx, await waitForBatch(ctx, client, batch));
  }
  ctx.out.result(
    batch,
    () => batchDetails(ctx.out, batch),
    () => batch.id,
  );
}

async function listBatches(ctx: CliContext, options: { limit: string; after?: string }): Promise<void> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw usageError(`--limit ${options.limit} is not a whole number from 1 to 100.`);
  const page = await new BatchClient(ctx.client()).listBatches({ limit, after: options.after });
  const { out } = ctx;
  out.result(
    page,
    () =>
      page.data.length
        ? batchTable(out, page.data)
        : ["No batches. Run a file of requests with `hearth create batch <file.jsonl> --endpoint …`."],
    () => page.data.map((b) => b.id),
  );
  if (page.has_more) out.note(`More: hearth list batches --after ${page.last_id}`);
}

async function cancelBatch(ctx: CliContext, batchId: string, options: { wait?: boolean }): Promise<void> {
  const client = new BatchClient(ctx.client());
  let batch = await client.cancelBatch(batchId);
  if (options.wait && !hasEnded(batch)) {
    const { waitForBatch } = await import("../batch-wait.js");
    batch = await waitForBatch(ctx, client, batch);
  }
  const { out } = ctx;
  const name = out.paint(batch.id, "bold");
  out.result(
    batch,
    () => {
      if (batch.status === "cancelling")
        return [
          `${name} is ${batchStatus(out, batch.status)}: its running requests stop, and no new one starts.`,
          `See its end with \`hearth get batch ${batch.id} --wait\`.`,
        ];
      if (batch.status === "cancelled")
        return [`${name} is ${batchStatus(out, batch.status)}.`, "", ...batchDetails(out, batch)];
      return `${name} had ended already (${batchStatus(out, batch.status)}): nothing to cancel.`;
    },
    () => batch.id,
  );
}
