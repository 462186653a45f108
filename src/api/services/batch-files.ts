import { randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import type { Caller } from "../../domain/caller.js";
import type { Db } from "../../db/client.js";
import { deleteFile, getFile, insertFile, listFiles } from "../../db/queries/files.js";
import { openBatchesReading } from "../../db/queries/batches.js";
import type { FileRow } from "../../db/schema/batches.js";
import { AppError } from "../../errors.js";
import type { RedisMutex } from "../../redis/redis-mutex.js";
import type { BlobStore } from "../../storage/blob-store.js";
import { storageKeys } from "../../storage/keys.js";
import type { FileObject } from "../contract/batch/files-routes.js";
import type { ModelCatalog } from "./model-catalog.js";
import { StoredBytes } from "./stored-bytes.js";

/** A page of a listing: its rows, and whether more follow. */
export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

/** A page as OpenAI's cursor-paginated list shows it, each row as `show` makes it. */
export function cursorPage<R, T extends { id: string }>({ rows, hasMore }: Page<R>, show: (row: R) => T) {
  const data = rows.map(show);
  return {
    object: "list" as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: hasMore,
  };
}

/**
 * The files API (docs/batch.md): an account's batch input files, stored in the BlobStore and
 * counted in its stored-bytes quota, and the output files its batches wrote.
 */
export class BatchFiles {
  private readonly quota: StoredBytes;

  constructor(
    private readonly db: Db,
    private readonly storage: BlobStore,
    catalog: ModelCatalog,
    commitLock: RedisMutex,
    private readonly maxFileBytes: number,
  ) {
    this.quota = new StoredBytes(db, storage, catalog, commitLock);
  }

  async upload(
    caller: Caller,
    upload: { purpose: string; file: Blob | undefined; filename: string },
  ): Promise<FileRow> {
    if (upload.purpose !== "batch") {
      throw new AppError(
        "invalid_request",
        `Files are for batches here: purpose must be "batch", not ${JSON.stringify(upload.purpose)}.`,
        {
          param: "purpose",
        },
      );
    }
    if (!upload.file) throw new AppError("invalid_request", "The form has no `file`.", { param: "file" });
    const { accountId } = caller;
    const id = `file-${randomUUID()}`;
    const key = storageKeys.accountFile(accountId, id);
    const room = await this.quota.room(accountId, key, this.maxFileBytes);
    if (upload.file.size > room.bytes) {
      throw new AppError(
        "payload_too_large",
        `The file is ${upload.file.size} bytes, more than ${room.what}; nothing was stored.`,
      );
    }
    let row: FileRow | undefined;
    // The row is written under the quota's lock, with the content in place: both or neither count.
    const guardCommit = this.quota.guard(accountId, key, this.maxFileBytes, {
      committed: async (size) => {
        row = await insertFile(this.db, {
          id,
          accountId,
          purpose: "batch",
          filename: upload.filename,
          bytes: size,
          storageKey: key,
        });
      },
    });
    try {
      await this.storage.put(key, upload.file.stream() as unknown as AsyncIterable<Uint8Array>, {
        maxBytes: room.bytes,
        guardCommit,
      });
    } catch (error) {
      if (row) await deleteFile(this.db, accountId, id).catch(() => undefined);
      throw error;
    }
    return row!;
  }

  async list(caller: Caller, query: { after?: string; limit: number; purpose?: string }): Promise<Page<FileRow>> {
    const after = query.after === undefined ? undefined : await this.get(caller, query.after);
    const rows = await listFiles(this.db, caller.accountId, { after, limit: query.limit + 1, purpose: query.purpose });
    return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }

  /** The account's file; another account's is a 404, as a missing one. */
  async get(caller: Caller, id: string): Promise<FileRow> {
    const row = await getFile(this.db, caller.accountId, id);
    if (!row) throw new AppError("not_found", `There is no file ${id}.`, { param: "file_id" });
    return row;
  }

  async content(caller: Caller, id: string): Promise<{ file: FileRow; body: Readable }> {
    const file = await this.get(caller, id);
    return { file, body: await this.storage.get(file.storageKey) };
  }

  async delete(caller: Caller, id: string): Promise<FileRow> {
    const file = await this.get(caller, id);
    const readers = await openBatchesReading(this.db, caller.accountId, id);
    if (readers.length > 0) {
      throw new AppError("conflict", `Batch ${readers[0]} reads ${id} and has not ended: cancel it first.`, {
        param: "file_id",
      });
    }
    await deleteFile(this.db, caller.accountId, id);
    await this.storage.delete(file.storageKey);
    return file;
  }
}

/** A file row as the API shows it (OpenAI's File object). */
export function fileObject(row: FileRow): FileObject {
  return {
    id: row.id,
    object: "file",
    bytes: row.bytes,
    created_at: Math.floor(row.createdAt.getTime() / 1000),
    filename: row.filename,
    purpose: row.purpose,
    status: "processed",
    expires_at: null,
    status_details: null,
  };
}
