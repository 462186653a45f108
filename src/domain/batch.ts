import { z } from "zod";

/** The endpoints a batch's lines may call (docs/batch.md). */
export const BATCH_ENDPOINTS = ["/v1/chat/completions", "/v1/completions", "/v1/embeddings"] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/**
 * A batch's states, as OpenAI names them: validating → in_progress → finalizing → completed,
 * or failed (its input refused), expired (its window passed: what ran is kept), cancelling →
 * cancelled (what ran is kept).
 */
export const BATCH_STATUSES = [
  "validating",
  "failed",
  "in_progress",
  "finalizing",
  "completed",
  "expired",
  "cancelling",
  "cancelled",
] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** The states a runner still has work in (control/batch-runner.ts). */
export const OPEN_BATCH_STATUSES: readonly BatchStatus[] = ["validating", "in_progress", "finalizing", "cancelling"];

/** The states a cancel moves to `cancelling` (the others have ended, or are ending already). */
export const CANCELLABLE_BATCH_STATUSES: readonly BatchStatus[] = ["validating", "in_progress", "finalizing"];

/** What a file is for: a batch's input, or a batch's output or errors (Hearth writes those). */
export const FILE_PURPOSES = ["batch", "batch_output"] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** A completion window: hours or days, from one hour to a week ("24h", OpenAI's only one, by default). */
export const COMPLETION_WINDOW = /^(\d{1,3})([hd])$/;
export const MIN_WINDOW_MS = 3_600_000;
export const MAX_WINDOW_MS = 7 * 24 * 3_600_000;

/** A completion window in milliseconds; undefined when it is not one or out of bounds. */
export function windowMs(window: string): number | undefined {
  const match = COMPLETION_WINDOW.exec(window);
  if (!match) return undefined;
  const ms = Number(match[1]) * (match[2] === "h" ? 3_600_000 : 24 * 3_600_000);
  return ms >= MIN_WINDOW_MS && ms <= MAX_WINDOW_MS ? ms : undefined;
}

/** One line of a batch's input file. */
export const batchLineSchema = z.strictObject({
  custom_id: z.string().min(1).max(512),
  method: z.literal("POST"),
  url: z.enum(BATCH_ENDPOINTS),
  body: z.record(z.string(), z.unknown()),
});
export type BatchLine = z.infer<typeof batchLineSchema>;

/** A line of the input, with its line number in the file (from 1). */
export interface NumberedLine extends BatchLine {
  line: number;
}

/** A batch's input as read: its lines, or why it is refused. */
export type BatchInput = { lines: NumberedLine[] } | { errors: BatchLineError[] };

/** A line's refusal at validation: its line number (from 1), what is wrong, and where. */
export interface BatchLineError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}
