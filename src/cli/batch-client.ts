import path from "node:path";
import type { IncomingMessage } from "node:http";
import type { BatchObject } from "../api/contract/batch/batches-routes.js";
import type { FileObject } from "../api/contract/batch/files-routes.js";
import type { ApiTransport, UploadOptions } from "./api-transport.js";

/**
 * A typed client of Hearth's files and batches APIs (OpenAI's shapes, docs/api.md): upload a
 * batch's input, create the batch, follow it, and read its output and error files. It speaks
 * through the same transport as the management client (a HearthClient is one).
 */

export type Batch = BatchObject;
export type HearthFile = FileObject;

/** One page of an OpenAI-style listing, newest first. */
export interface ListPage<T> {
  object: "list";
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface CreateBatchRequest {
  input_file_id: string;
  endpoint: Batch["endpoint"];
  completion_window?: string;
  metadata?: Record<string, string>;
}

/** Whether the batch has ended (completed, failed, expired or cancelled): it changes no more. */
export function hasEnded(batch: Batch): boolean {
  return ["completed", "failed", "expired", "cancelled"].includes(batch.status);
}

export class BatchClient {
  constructor(private readonly api: ApiTransport) {}

  /** POST /v1/files: a local file as a batch's input (multipart, purpose "batch"), with its progress. */
  uploadFile(file: string, options: UploadOptions = {}): Promise<HearthFile> {
    return this.api.sendFile<HearthFile>(
      "/v1/files",
      { method: "POST", file, form: { fields: { purpose: "batch" }, field: "file", filename: path.basename(file) } },
      options,
    );
  }

  getFile = (fileId: string) => this.api.call<HearthFile>("GET", filePath(fileId));
  listFiles = (query: { limit?: number; after?: string } = {}) =>
    this.api.call<ListPage<HearthFile>>("GET", `/v1/files${search(query)}`);
  deleteFile = (fileId: string) =>
    this.api.call<{ id: string; object: "file"; deleted: true }>("DELETE", filePath(fileId));
  /** A file's content as a stream (JSON lines), once the server has answered. */
  fileContent = (fileId: string, signal?: AbortSignal): Promise<IncomingMessage> =>
    this.api.download(`${filePath(fileId)}/content`, signal);

  createBatch = (body: CreateBatchRequest) => this.api.call<Batch>("POST", "/v1/batches", body);
  getBatch = (batchId: string) => this.api.call<Batch>("GET", batchPath(batchId));
  listBatches = (query: { limit?: number; after?: string } = {}) =>
    this.api.call<ListPage<Batch>>("GET", `/v1/batches${search(query)}`);
  cancelBatch = (batchId: string) => this.api.call<Batch>("POST", `${batchPath(batchId)}/cancel`);

  /**
   * Polls the batch until it has ended, calling onUpdate with every answer; returns the last
   * answer, also when `signal` stops the waiting first (the batch goes on either way).
   */
  async waitForBatch(
    batchId: string,
    options: { onUpdate?: (batch: Batch) => void; intervalMs?: number; signal?: AbortSignal } = {},
  ): Promise<Batch> {
    const { signal } = options;
    for (;;) {
      const batch = await this.getBatch(batchId);
      options.onUpdate?.(batch);
      if (hasEnded(batch) || signal?.aborted) return batch;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, options.intervalMs ?? 1_000);
        function done() {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          resolve();
        }
        signal?.addEventListener("abort", done, { once: true });
      });
      if (signal?.aborted) return batch;
    }
  }
}

const filePath = (fileId: string) => `/v1/files/${encodeURIComponent(fileId)}`;
const batchPath = (batchId: string) => `/v1/batches/${encodeURIComponent(batchId)}`;

function search(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  return params.size ? `?${params}` : "";
}
