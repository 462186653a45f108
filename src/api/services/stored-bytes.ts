import type { Db } from "../../db/client.js";
import { fileBytes } from "../../db/queries/files.js";
import { AppError } from "../../errors.js";
import type { RedisMutex } from "../../redis/redis-mutex.js";
import type { BlobStore } from "../../storage/blob-store.js";
import { storageKeys } from "../../storage/keys.js";
import type { ModelCatalog } from "./model-catalog.js";

const UPLOADS_BUSY = "Other uploads of this account are being stored; please retry.";

/** How many bytes one upload may have, and how to say which limit that is. */
export interface UploadRoom {
  bytes: number;
  what: string;
}

/**
 * An account's stored-bytes quota (HEARTH_ACCOUNT_MAX_STORED_BYTES, or the account's own): its
 * models' uploaded files and its files of the files API (batches' input and output) count
 * together. Uploads take their key under the account's lock, checking the quota again then, so
 * that two uploads at once cannot pass it together.
 */
export class StoredBytes {
  constructor(
    private readonly db: Db,
    private readonly storage: BlobStore,
    private readonly catalog: ModelCatalog,
    private readonly commitLock: RedisMutex,
  ) {}

  /**
   * The most bytes an upload to `key` may have: `perFile`, or what is left of the account's
   * quota (the file it replaces, if any, not counted).
   */
  async room(accountId: string, key: string, perFile: number): Promise<UploadRoom> {
    const { maxStoredBytes } = await this.catalog.limits.of(accountId);
    const used = (await this.modelFileBytes(accountId, key)) + (await fileBytes(this.db, accountId));
    const left = Math.max(0, maxStoredBytes - used);
    return left < perFile
      ? {
          bytes: left,
          what: `the ${left} bytes left of account "${accountId}"'s storage quota (${maxStoredBytes} bytes, ${used} in use): delete files or models, or ask an admin for more`,
        }
      : { bytes: perFile, what: `${perFile} bytes, the most one file may have` };
  }

  /**
   * A BlobStore `guardCommit` that lets the content take its key only if the quota still has
   * room for it, under the account's lock: `checked` is told the room found then (a refusal's
   * words name it), and `committed` runs inside the lock too, once the content is in (recording the file).
   */
  guard(
    accountId: string,
    key: string,
    perFile: number,
    hooks: { checked?: (room: UploadRoom) => void; committed?: (size: number) => Promise<void> } = {},
  ) {
    const { checked, committed } = hooks;
    return (size: number, commit: () => Promise<void>) =>
      this.commitLock.run(`stored-bytes:${accountId}`, UPLOADS_BUSY, async () => {
        const room = await this.room(accountId, key, perFile);
        checked?.(room);
        if (size > room.bytes) throw new AppError("payload_too_large", `The file is larger than ${room.what}.`);
        await commit();
        await committed?.(size);
      });
  }

  /** The sizes of the account's models' uploaded files but `except`, asked for together (with S3, one HEAD each). */
  private async modelFileBytes(accountId: string, except: string): Promise<number> {
    const others = (await this.storage.list(storageKeys.accountModels(accountId))).filter(
      (stored) => stored !== except && stored.includes("/files/"),
    );
    const sizes = await Promise.all(others.map(async (stored) => (await this.storage.stat(stored))?.size ?? 0));
    return sizes.reduce((sum, size) => sum + size, 0);
  }
}
