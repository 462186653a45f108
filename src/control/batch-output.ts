import type { Db } from "../db/client.js";
import { resultsPage } from "../db/queries/batches.js";
import { insertFile } from "../db/queries/files.js";
import type { BatchResultRow, BatchRow } from "../db/schema/batches.js";
import type { NumberedLine } from "../domain/batch.js";
import type { BlobStore } from "../storage/blob-store.js";
import { storageKeys } from "../storage/keys.js";

/** Results read at once while a file is written: memory stays bounded whatever the batch's size. */
const PAGE = 500;

/** How a batch ended, for the lines that have no result. */
export type BatchEnding = "completed" | "cancelled" | "expired";

const UNRUN: Record<Exclude<BatchEnding, "completed">, { code: string; message: string }> = {
  cancelled: { code: "batch_cancelled", message: "This request was not run: the batch was cancelled first." },
  expired: {
    code: "batch_expired",
    message: "This request could not be run before the batch's completion window expired.",
  },
};

/**
 * Writes a batch's output file (the lines answered with a 2xx) and error file (the others, and
 * with `ending` cancelled or expired the lines that never ran), as JSON lines in OpenAI's shape,
 * keyed by custom_id. Their IDs follow from the batch's, so that a runner that dies while
 * writing them and another that writes them again make the same files. A file with no lines is
 * not written (its ID is null).
 */
export async function writeBatchFiles(
  deps: { db: Db; storage: BlobStore },
  batch: BatchRow,
  lines: readonly NumberedLine[],
  ending: BatchEnding,
): Promise<{ outputFileId: string | null; errorFileId: string | null }> {
  const base = batch.id.replace(/^batch_/, "");
  const outputFileId = await writeFile(deps, batch, `file-${base}-output`, "output.jsonl", async function* () {
    for await (const result of results(deps.db, batch.id)) if (answered(result)) yield lineOf(base, result);
  });
  const errorFileId = await writeFile(deps, batch, `file-${base}-errors`, "errors.jsonl", async function* () {
    const seen = new Set<number>();
    for await (const result of results(deps.db, batch.id)) {
      seen.add(result.line);
      if (!answered(result)) yield lineOf(base, result);
    }
    if (ending === "completed") return;
    for (const line of lines) {
      if (seen.has(line.line)) continue;
      yield JSON.stringify({
        id: `batch_req_${base}_${line.line}`,
        custom_id: line.custom_id,
        response: null,
        error: UNRUN[ending],
      });
    }
  });
  return { outputFileId, errorFileId };
}

const answered = (r: BatchResultRow) => r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;

/** A result as its output line: the answer's status, request ID and body. */
function lineOf(base: string, r: BatchResultRow): string {
  return JSON.stringify({
    id: `batch_req_${r.requestId ?? `${base}_${r.line}`}`,
    custom_id: r.customId,
    response: r.statusCode === null ? null : { status_code: r.statusCode, request_id: r.requestId, body: r.body },
    error: r.error ?? null,
  });
}

async function* results(db: Db, batchId: string): AsyncGenerator<BatchResultRow> {
  for (let after = 0; ; ) {
    const page = await resultsPage(db, batchId, after, PAGE);
    yield* page;
    if (page.length < PAGE) return;
    after = page.at(-1)!.line;
  }
}

/** Stores the lines as a file of the batch's account (purpose batch_output); its ID, or null when there were none. */
async function writeFile(
  { db, storage }: { db: Db; storage: BlobStore },
  batch: BatchRow,
  id: string,
  filename: string,
  lines: () => AsyncGenerator<string>,
): Promise<string | null> {
  let count = 0;
  const encoder = new TextEncoder();
  const body = async function* () {
    for await (const line of lines()) {
      count++;
      yield encoder.encode(`${line}\n`);
    }
  };
  const key = storageKeys.accountFile(batch.accountId, id);
  const info = await storage.put(key, body());
  if (count === 0) {
    await storage.delete(key);
    return null;
  }
  await insertFile(db, {
    id,
    accountId: batch.accountId,
    purpose: "batch_output",
    filename,
    bytes: info.size,
    storageKey: key,
  });
  return id;
}
