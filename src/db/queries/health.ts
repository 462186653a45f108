import { sql } from "drizzle-orm";
import type { Db } from "../client.js";

/** Resolves when the database answers a trivial query; rejects otherwise. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}
