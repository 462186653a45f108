import type { Batch, HearthFile } from "./batch-client.js";
import { bytes, details, shortTime, table, type Output } from "./output.js";

/** How batches and files look in text output. */

/** Unix seconds → the tables' time (2026-01-02 03:04 UTC). */
export const unixTime = (seconds: number | null): string =>
  seconds === null ? "-" : shortTime(new Date(seconds * 1000).toISOString());

/** "2/3" (the requests with a result, of all), "2/3 (1 failed)"; "-" before validation has counted them. */
export function batchProgress(batch: Batch): string {
  const { total, completed, failed } = batch.request_counts;
  if (total === 0) return "-";
  return `${completed + failed}/${total}${failed ? ` (${failed} failed)` : ""}`;
}

/** A batch's status, colored by how it is going. */
export function batchStatus(out: Output, status: Batch["status"], stream = out.stdout): string {
  const style = status === "completed" ? "green" : status === "failed" || status === "expired" ? "red" : "yellow";
  return out.paint(status, style, stream);
}

/** When the batch reached its status: the time of the status's own field. */
function statusTime(batch: Batch): number | null {
  const at: Record<Batch["status"], number | null> = {
    validating: batch.created_at,
    in_progress: batch.in_progress_at,
    finalizing: batch.finalizing_at,
    completed: batch.completed_at,
    failed: batch.failed_at,
    expired: batch.expired_at,
    cancelling: batch.cancelling_at,
    cancelled: batch.cancelled_at,
  };
  return at[batch.status];
}

export function batchDetails(out: Output, batch: Batch): string[] {
  const metadata = Object.entries(batch.metadata ?? {}).map(([k, v]) => `${k}=${v}`);
  const pairs: [string, string][] = [
    ["ID", out.paint(batch.id, "bold")],
    ["Status", `${batchStatus(out, batch.status)} since ${unixTime(statusTime(batch))}`],
    ["Endpoint", batch.endpoint],
    ["Input file", batch.input_file_id],
    ["Requests", requestCounts(batch)],
    ["Created", unixTime(batch.created_at)],
    ["Window", `${batch.completion_window}, until ${unixTime(batch.expires_at)}`],
    ["Output file", batch.output_file_id ?? "-"],
    ["Error file", batch.error_file_id ?? "-"],
    ...(metadata.length ? [["Metadata", metadata.join(", ")] as [string, string]] : []),
  ];
  const hints = resultHints(batch);
  return [...details(pairs), ...inputErrors(batch), ...(hints.length ? ["", ...hints] : [])];
}

function requestCounts(batch: Batch): string {
  const { total, completed, failed } = batch.request_counts;
  if (batch.status === "validating") return "not counted yet (validating the file)";
  if (total === 0) return "none";
  return `${total}: ${completed} answered, ${failed} failed, ${total - completed - failed} not run`;
}

/** Why validation refused the input: a line each. */
export function inputErrors(batch: Batch): string[] {
  const errors = batch.errors?.data ?? [];
  if (errors.length === 0) return [];
  return ["Errors in the input file:", ...errors.map((e) => `  ${errorLine(e)}`)];
}

/** "line 3, body.model: Expected string." */
export function errorLine(error: NonNullable<Batch["errors"]>["data"][number]): string {
  const where = [error.line === null ? undefined : `line ${error.line}`, error.param ?? undefined].filter(Boolean);
  return `${where.length ? `${where.join(", ")}: ` : ""}${error.message}`;
}

/** How to download a batch's output and error files, once it has them. */
export function resultHints(batch: Batch): string[] {
  const lines: string[] = [];
  if (batch.output_file_id)
    lines.push(`Download the answers: hearth get file ${batch.output_file_id} --out ${batch.id}-output.jsonl`);
  if (batch.error_file_id)
    lines.push(`Download the errors:  hearth get file ${batch.error_file_id} --out ${batch.id}-errors.jsonl`);
  return lines;
}

/** The one line a batch's end comes to, colored. */
export function batchEnding(out: Output, batch: Batch): string {
  const { total, completed, failed } = batch.request_counts;
  const status = batchStatus(out, batch.status);
  if (batch.status === "failed") return `${out.paint(batch.id, "bold")} ${status}: its input file was refused.`;
  return `${out.paint(batch.id, "bold")} ${status}: ${completed} of ${total} requests answered, ${failed} failed.`;
}

export function batchTable(out: Output, batches: readonly Batch[]): string[] {
  return table(
    out,
    ["ID", "STATUS", "ENDPOINT", "PROGRESS", "CREATED"],
    batches.map((b) => [b.id, batchStatus(out, b.status), b.endpoint, batchProgress(b), unixTime(b.created_at)]),
  );
}

export function fileTable(out: Output, files: readonly HearthFile[]): string[] {
  return table(
    out,
    ["ID", "PURPOSE", "SIZE", "FILENAME", "CREATED"],
    files.map((f) => [f.id, f.purpose, bytes(f.bytes), f.filename, unixTime(f.created_at)]),
  );
}
