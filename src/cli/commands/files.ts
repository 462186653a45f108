import { createWriteStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { BatchClient } from "../batch-client.js";
import { fileTable } from "../batch-view.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { usageError } from "../exit-codes.js";
import { bytes } from "../output.js";

/**
 * get, list and delete file: the account's files of the files API, batches' inputs and the
 * output and error files batches write. `get file` downloads the content.
 */
export function registerFileCommands({ get, list, delete: remove }: Verbs): void {
  examples(
    get
      .command("file")
      .description("Download a file's content (a batch's output or errors, JSON lines): to stdout, or to --out")
      .argument("<file_id>")
      .option("--out <path>", "write it to this file (replaced if it exists), or into this folder as <file_id>.jsonl")
      .action(withContext(getFile)),
    [
      "hearth get file file-0c3f…-output --out answers.jsonl",
      "hearth get file file-0c3f…-errors | jq .error",
      "hearth get file file-0c3f…-output --out results/ --output json   # the file's record",
    ],
  );

  examples(
    list
      .command("files")
      .description("List the account's files, newest first: batches' inputs (batch) and their results (batch_output)")
      .option("--limit <n>", "files to show (1–10000)", "100")
      .option("--after <file_id>", "the page after this file (the last ID of the previous page)")
      .action(withContext(listFiles)),
    ["hearth list files", "hearth list files --output json"],
  );

  examples(
    remove
      .command("file")
      .description("Delete a file (not the input of a batch that has not ended)")
      .argument("<file_id>")
      .action(withContext(deleteFile)),
    ["hearth delete file file-6f1c…"],
  );
}

async function getFile(ctx: CliContext, fileId: string, options: { out?: string }): Promise<void> {
  const client = new BatchClient(ctx.client());
  if (options.out === undefined) {
    // The content is the result: as it is on stdout, whatever --output says.
    await pipeline(await client.fileContent(fileId), process.stdout, { end: false });
    return;
  }
  const file = await client.getFile(fileId);
  const target = (await isFolder(options.out)) ? path.join(options.out, `${file.id}.jsonl`) : options.out;
  await pipeline(await client.fileContent(fileId), createWriteStream(target));
  ctx.out.result(
    file,
    () => `Wrote ${file.id} (${file.filename}, ${bytes(file.bytes)}) to ${target}.`,
    () => target,
  );
}

/** A folder that is there, or a path that ends in a slash (made if it is not there). */
async function isFolder(target: string): Promise<boolean> {
  if ((await stat(target).catch(() => undefined))?.isDirectory()) return true;
  if (!/[\\/]$/.test(target)) return false;
  await mkdir(target, { recursive: true });
  return true;
}

async function listFiles(ctx: CliContext, options: { limit: string; after?: string }): Promise<void> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw usageError(`--limit ${options.limit} is not a whole number from 1 to 10000.`);
  const page = await new BatchClient(ctx.client()).listFiles({ limit, after: options.after });
  const { out } = ctx;
  out.result(
    page,
    () => (page.data.length ? fileTable(out, page.data) : ["No files."]),
    () => page.data.map((f) => f.id),
  );
  if (page.has_more) out.note(`More: hearth list files --after ${page.last_id}`);
}

async function deleteFile(ctx: CliContext, fileId: string): Promise<void> {
  const deleted = await new BatchClient(ctx.client()).deleteFile(fileId);
  ctx.out.result(
    deleted,
    () => `Deleted ${deleted.id}.`,
    () => deleted.id,
  );
}
