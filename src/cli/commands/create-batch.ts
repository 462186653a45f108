import { stat } from "node:fs/promises";
import path from "node:path";
import { type Batch, BatchClient, type CreateBatchRequest, type HearthFile } from "../batch-client.js";
import { examples, interruptSignal, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { CliError, EXIT, usageError } from "../exit-codes.js";

/**
 * `hearth create batch`: uploads a file of requests (JSON lines), creates a batch from it, and
 * with --wait follows it to its end (batch-wait.ts). Ctrl-C during the upload stores nothing.
 */

interface CreateBatchOptions {
  endpoint: string;
  window: string;
  metadata?: string[];
  wait?: boolean;
}

export function registerCreateBatch({ create }: Verbs): void {
  examples(
    create
      .command("batch")
      .description("Run a file of requests as a batch: upload it, create the batch, and optionally wait for its end")
      .argument("<file>", "JSON lines, one request each: {custom_id, method: POST, url, body}")
      .requiredOption(
        "--endpoint <path>",
        "the endpoint every line calls: /v1/chat/completions, /v1/completions or /v1/embeddings",
      )
      .option("--window <span>", "how long the batch may run, hours or days from 1h to 7d", "24h")
      .option("--metadata <key=value...>", "labels kept with the batch (at most 16)")
      .option("--wait", "show its progress until it ends; Ctrl-C stops the waiting, not the batch")
      .action(withContext(createBatch)),
    [
      "hearth create batch prompts.jsonl --endpoint /v1/chat/completions --wait",
      "hearth create batch vectors.jsonl --endpoint /v1/embeddings --window 48h --metadata job=nightly owner=ana",
      "hearth create batch prompts.jsonl --endpoint /v1/completions --output json",
    ],
  );
}

async function createBatch(ctx: CliContext, file: string, options: CreateBatchOptions): Promise<void> {
  // Checked before anything is sent: a usage error costs nothing. The batch vocabulary comes
  // with this command (it brings zod), not at every start.
  const { BATCH_ENDPOINTS, windowMs } = await import("../../domain/batch.js");
  const endpoint = BATCH_ENDPOINTS.find((e) => e === options.endpoint);
  if (!endpoint)
    throw usageError(`Invalid --endpoint "${options.endpoint}": use one of ${BATCH_ENDPOINTS.join(", ")}.`);
  if (windowMs(options.window) === undefined)
    throw usageError(`Invalid --window "${options.window}": give hours or days from 1h to 7d, such as 24h.`);
  const metadata = parseMetadata(options.metadata ?? []);
  await checkFile(file);

  const { out } = ctx;
  const client = new BatchClient(ctx.client());
  const input = await upload(ctx, client, file);
  const request: CreateBatchRequest = {
    input_file_id: input.id,
    endpoint,
    completion_window: options.window,
    ...(metadata ? { metadata } : {}),
  };
  let batch: Batch;
  try {
    batch = await client.createBatch(request);
  } catch (error) {
    // No batch reads the file: it would only take room in the account's quota.
    await client.deleteFile(input.id).catch(() => undefined);
    throw error;
  }
  if (!options.wait) {
    out.result(
      batch,
      () => [
        `Created ${out.paint(batch.id, "bold")} (${batch.status}) from ${input.id}.`,
        `Follow it with \`hearth get batch ${batch.id} --wait\`; stop it with \`hearth cancel batch ${batch.id}\`.`,
      ],
      () => batch.id,
    );
    return;
  }
  out.note(`Created ${batch.id}; waiting for it to end (Ctrl-C stops the waiting, not the batch).`);
  // The progress bar loads with the command that shows it, not at every start.
  const { reportEndedBatch, waitForBatch } = await import("../batch-wait.js");
  reportEndedBatch(ctx, await waitForBatch(ctx, client, batch));
}

/** key=value pairs → the batch's metadata; a usage error for anything else. */
export function parseMetadata(pairs: string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  const metadata: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw usageError(`Invalid --metadata "${pair}": give key=value.`);
    metadata[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return metadata;
}

async function checkFile(file: string): Promise<void> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw usageError(`${file} is not a file.`, "Give the path of a JSON lines file.");
  if (info.size === 0) throw usageError(`${file} is empty.`, "Give it one request per line.");
}

/** Uploads the file with its progress; Ctrl-C aborts it, and the server keeps nothing of it. */
async function upload(ctx: CliContext, client: BatchClient, file: string): Promise<HearthFile> {
  const { size } = await stat(file);
  const name = path.basename(file);
  const { UploadProgress } = await import("../upload-progress.js");
  const progress = new UploadProgress(ctx.out, size);
  const interrupt = interruptSignal();
  try {
    const uploaded = await client.uploadFile(file, {
      signal: interrupt.signal,
      onProgress: (sent) => progress.update(name, sent),
    });
    progress.fileDone(name, size);
    return uploaded;
  } catch (e) {
    if (!interrupt.signal.aborted) throw e;
    throw new CliError(EXIT.interrupted, "Upload interrupted: nothing was stored and no batch was created.");
  } finally {
    interrupt.release();
    progress.stop();
  }
}
