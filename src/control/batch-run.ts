import { setTimeout as sleep } from "node:timers/promises";
import type { Db } from "../db/client.js";
import { moveBatch, resultLines } from "../db/queries/batches.js";
import { getFile } from "../db/queries/files.js";
import type { BatchRow } from "../db/schema/batches.js";
import type { BatchEndpoint, BatchInput, NumberedLine } from "../domain/batch.js";
import type { Logger } from "../logger.js";
import type { BlobStore } from "../storage/blob-store.js";
import { type BatchEnding, writeBatchFiles } from "./batch-output.js";
import { BatchResultWriter } from "./batch-result-writer.js";

/** What a line's request was answered: its status, request ID and body (JSON, or text). */
export interface LineAnswer {
  status: number;
  requestId: string | null;
  body: unknown;
  /** With a 429 or 503: when to try again. */
  retryAfterMs?: number;
}

export interface BatchRunDeps {
  db: Db;
  storage: BlobStore;
  log: Logger;
  /** Reads and checks an input file's text (api/services/batch-input.ts). */
  readInput(text: string, endpoint: BatchEndpoint): BatchInput;
  /** Runs one line as the batch's key (the API in this process: api/batch-call.ts). */
  execute(batch: BatchRow, line: NumberedLine, signal: AbortSignal): Promise<LineAnswer>;
}

/** Why a run stops before its batch is done: the batch was cancelled, it expired, or its runner stops. */
export type StopReason = "cancel" | "expire" | "stop";

/** The longest a line waits before it tries again after a 429 or 503 without Retry-After. */
const MAX_BACKOFF_MS = 10_000;

/**
 * One runner's turn at one batch (control/batch-runner.ts holds its lease): validate its input,
 * run the lines without a result, `concurrency` at a time, and end it. Each line's result is
 * written once (batch_results' key), in groups (batch-result-writer.ts): a line that ran but whose
 * result was not written runs again under the next runner, and only one result counts. `signal`
 * stops it, with a StopReason.
 */
export class BatchRun {
  private batch: BatchRow;
  private readonly results: BatchResultWriter;

  constructor(
    private readonly deps: BatchRunDeps,
    batch: BatchRow,
    private readonly runnerId: string,
    private readonly concurrency: number,
  ) {
    this.batch = batch;
    this.results = new BatchResultWriter(deps.db, batch.id, concurrency);
  }

  async run(signal: AbortSignal): Promise<void> {
    const input = await this.readInput();
    if ("errors" in input) {
      if (this.batch.status === "validating") await this.move(["validating"], "failed", { errors: input.errors });
      else await this.end([], "cancelled"); // its input is gone: nothing more can run
      return;
    }
    const { lines } = input;
    if (this.batch.status === "validating") {
      if (!(await this.move(["validating"], "in_progress", { total: lines.length }))) return;
    }
    if (this.batch.status === "in_progress" && this.batch.expiresAt.getTime() > Date.now()) {
      await this.runLines(lines, signal);
      if (signal.aborted && signal.reason === "stop") return;
    }
    const reason = signal.aborted ? (signal.reason as StopReason) : undefined;
    if (this.batch.status === "cancelling" || reason === "cancel") return this.end(lines, "cancelled");
    if (this.batch.expiresAt.getTime() <= Date.now() || reason === "expire") return this.end(lines, "expired");
    if (this.batch.status === "in_progress") {
      const done = await resultLines(this.deps.db, this.batch.id);
      if (lines.some((l) => !done.has(l.line))) return; // a line failed to be written: the next turn runs it
      if (!(await this.move(["in_progress"], "finalizing"))) return;
    }
    if (this.batch.status === "finalizing") await this.end(lines, "completed");
  }

  /** The input's lines as checked, or errors (the file gone counts as one). */
  private async readInput(): Promise<BatchInput> {
    const { db, storage } = this.deps;
    const file = await getFile(db, this.batch.accountId, this.batch.inputFileId);
    if (!file) {
      const message = `The input file ${this.batch.inputFileId} is gone.`;
      return { errors: [{ code: "file_not_found", message, param: "input_file_id", line: null }] };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await storage.get(file.storageKey)) chunks.push(chunk as Buffer);
    return this.deps.readInput(Buffer.concat(chunks).toString("utf8"), this.batch.endpoint as BatchEndpoint);
  }

  private async runLines(lines: readonly NumberedLine[], signal: AbortSignal): Promise<void> {
    const done = await resultLines(this.deps.db, this.batch.id);
    const pending = lines.filter((l) => !done.has(l.line));
    let next = 0;
    const lane = async () => {
      while (!signal.aborted && next < pending.length) await this.runLine(pending[next++]!, signal);
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.concurrency, pending.length) }, lane));
    } finally {
      // What was answered is written before the run goes on or stops.
      await this.results.drain();
    }
  }

  /** Runs a line until it has an answer other than "too many requests" or "unavailable", and writes it. */
  private async runLine(line: NumberedLine, signal: AbortSignal): Promise<void> {
    for (let attempt = 0; !signal.aborted; attempt++) {
      let answer: LineAnswer;
      try {
        answer = await this.deps.execute(this.batch, line, signal);
      } catch (error) {
        if (signal.aborted) return;
        this.deps.log.error("a batch's line failed to run", {
          batchId: this.batch.id,
          line: line.line,
          error: String(error),
        });
        answer = {
          status: 500,
          requestId: null,
          body: {
            error: { message: "The request failed to run.", type: "server_error", code: "internal", param: null },
          },
        };
      }
      if (signal.aborted) return; // stopped: not an answer
      if (answer.status === 429 || answer.status === 503) {
        const wait = answer.retryAfterMs ?? Math.min(MAX_BACKOFF_MS, 250 * 2 ** attempt);
        await sleep(wait, undefined, { signal }).catch(() => undefined);
        continue;
      }
      await this.results.add({
        line: line.line,
        customId: line.custom_id,
        statusCode: answer.status,
        requestId: answer.requestId,
        body: answer.body,
      });
      return;
    }
  }

  /** Writes the output and error files and ends the batch. */
  private async end(lines: readonly NumberedLine[], ending: BatchEnding): Promise<void> {
    const files = await writeBatchFiles(this.deps, this.batch, lines, ending);
    const from =
      ending === "completed"
        ? (["finalizing"] as const)
        : (["validating", "in_progress", "finalizing", "cancelling"] as const);
    // A batch cancelled while it validated counts the lines its error file lists as not run.
    await this.move(from, ending, { ...files, ...(this.batch.total === 0 ? { total: lines.length } : {}) });
  }

  private async move(
    from: readonly BatchRow["status"][],
    to: BatchRow["status"],
    set: Partial<BatchRow> = {},
  ): Promise<boolean> {
    const moved = await moveBatch(this.deps.db, this.batch.id, this.runnerId, from, to, set);
    if (moved) this.batch = moved;
    return moved !== undefined;
  }
}
