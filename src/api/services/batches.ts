import { randomUUID } from "node:crypto";
import type { Caller } from "../../domain/caller.js";
import type { Db } from "../../db/client.js";
import {
  cancelBatch,
  getBatch,
  insertBatch,
  listBatches,
  recentBatches,
  unrunBatches,
} from "../../db/queries/batches.js";
import { getFile } from "../../db/queries/files.js";
import type { BatchRow } from "../../db/schema/batches.js";
import { type BatchEndpoint, windowMs } from "../../domain/batch.js";
import { AppError } from "../../errors.js";
import type { BatchObject } from "../contract/batch/batches-routes.js";
import type { Page } from "./batch-files.js";

export interface NewBatch {
  input_file_id: string;
  endpoint: BatchEndpoint;
  completion_window: string;
  metadata?: Record<string, string> | null;
}

/**
 * The batches API (docs/batch.md): a batch is a row that the batch runners of the API processes
 * (control/batch-runner.ts) take, validate, run line by line and finalize; this service creates,
 * reads and cancels them for their account, and shows any account's to the operators.
 */
export class Batches {
  constructor(
    private readonly db: Db,
    /** Told of each batch created, so that this process's runner takes it at once instead of at its next look. */
    private readonly created: () => void = () => {},
  ) {}

  async create(caller: Caller, request: NewBatch): Promise<BatchRow> {
    const window = windowMs(request.completion_window);
    if (window === undefined) {
      throw new AppError(
        "invalid_request",
        `completion_window must be hours or days from 1h to 7d, such as "24h"; got ${JSON.stringify(request.completion_window)}.`,
        { param: "completion_window" },
      );
    }
    const file = await getFile(this.db, caller.accountId, request.input_file_id);
    if (!file)
      throw new AppError("not_found", `There is no file ${request.input_file_id}.`, { param: "input_file_id" });
    if (file.purpose !== "batch") {
      throw new AppError("invalid_request", `${file.id} is a batch's output, not an input (purpose "batch").`, {
        param: "input_file_id",
      });
    }
    const now = Date.now();
    const batch = await insertBatch(this.db, {
      id: `batch_${randomUUID()}`,
      accountId: caller.accountId,
      keyId: caller.keyId,
      endpoint: request.endpoint,
      inputFileId: file.id,
      completionWindow: request.completion_window,
      metadata: request.metadata ?? null,
      status: "validating",
      createdAt: new Date(now),
      expiresAt: new Date(now + window),
    });
    this.created();
    return batch;
  }

  /** The account's batch; another account's is a 404, as a missing one. */
  async get(caller: Caller, id: string): Promise<BatchRow> {
    const row = await getBatch(this.db, caller.accountId, id);
    if (!row) throw new AppError("not_found", `There is no batch ${id}.`, { param: "batch_id" });
    return row;
  }

  async list(caller: Caller, query: { after?: string; limit: number }): Promise<Page<BatchRow>> {
    const after = query.after === undefined ? undefined : await this.get(caller, query.after);
    const rows = await listBatches(this.db, caller.accountId, { after, limit: query.limit + 1 });
    return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }

  /** Asks the batch to stop (its runner sees it within a lease renewal); an ended one is answered as it is. */
  async cancel(caller: Caller, id: string): Promise<BatchRow> {
    const row = await cancelBatch(this.db, caller.accountId, id);
    if (!row) throw new AppError("not_found", `There is no batch ${id}.`, { param: "batch_id" });
    return row;
  }

  /** For the operators (the console): the newest `limit` batches of every account, or of one. */
  async recent(limit: number, accountId?: string): Promise<BatchRow[]> {
    return accountId === undefined ? recentBatches(this.db, limit) : listBatches(this.db, accountId, { limit });
  }

  /** For the operators: how many batches have not ended yet no runner holds (none took them, or theirs died). */
  async unrun(): Promise<number> {
    return unrunBatches(this.db);
  }
}

const seconds = (at: Date | null) => (at ? Math.floor(at.getTime() / 1000) : null);

/** A batch row as the API shows it (OpenAI's Batch object). */
export function batchObject(row: BatchRow): BatchObject {
  return {
    id: row.id,
    object: "batch",
    endpoint: row.endpoint as BatchEndpoint,
    errors: row.errors ? { object: "list", data: row.errors } : null,
    input_file_id: row.inputFileId,
    completion_window: row.completionWindow,
    status: row.status,
    output_file_id: row.outputFileId,
    error_file_id: row.errorFileId,
    created_at: seconds(row.createdAt)!,
    in_progress_at: seconds(row.inProgressAt),
    expires_at: seconds(row.expiresAt)!,
    finalizing_at: seconds(row.finalizingAt),
    completed_at: seconds(row.completedAt),
    failed_at: seconds(row.failedAt),
    expired_at: seconds(row.expiredAt),
    cancelling_at: seconds(row.cancellingAt),
    cancelled_at: seconds(row.cancelledAt),
    request_counts: { total: row.total, completed: row.completed, failed: row.failed },
    metadata: row.metadata ?? null,
  };
}
