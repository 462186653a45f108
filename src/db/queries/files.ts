import { and, desc, eq, lt, or, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { files, type FileRow } from "../schema/batches.js";

export async function insertFile(db: Db, file: Omit<FileRow, "createdAt"> & { createdAt?: Date }): Promise<FileRow> {
  const [row] = await db.insert(files).values(file).onConflictDoNothing({ target: files.id }).returning();
  // A file written again (a batch's output, finalized twice) keeps its first row.
  return row ?? (await getFile(db, file.accountId, file.id))!;
}

/** The account's file; another account's is undefined, as a missing one. */
export async function getFile(db: Db, accountId: string, id: string): Promise<FileRow | undefined> {
  const [row] = await db
    .select()
    .from(files)
    .where(and(eq(files.id, id), eq(files.accountId, accountId)));
  return row;
}

/** The account's files, newest first, after the file `after` (its page's last), `limit` of them. */
export async function listFiles(
  db: Db,
  accountId: string,
  options: { after?: FileRow; limit: number; purpose?: string },
): Promise<FileRow[]> {
  const { after, limit, purpose } = options;
  return db
    .select()
    .from(files)
    .where(
      and(
        eq(files.accountId, accountId),
        purpose ? eq(files.purpose, purpose as FileRow["purpose"]) : undefined,
        after
          ? or(lt(files.createdAt, after.createdAt), and(eq(files.createdAt, after.createdAt), lt(files.id, after.id)))
          : undefined,
      ),
    )
    .orderBy(desc(files.createdAt), desc(files.id))
    .limit(limit);
}

export async function deleteFile(db: Db, accountId: string, id: string): Promise<FileRow | undefined> {
  const [row] = await db
    .delete(files)
    .where(and(eq(files.id, id), eq(files.accountId, accountId)))
    .returning();
  return row;
}

/** The bytes of the account's files, for its stored-bytes quota. */
export async function fileBytes(db: Db, accountId: string): Promise<number> {
  const [row] = await db
    .select({ bytes: sql<string | null>`sum(${files.bytes})` })
    .from(files)
    .where(eq(files.accountId, accountId));
  return Number(row?.bytes ?? 0);
}
