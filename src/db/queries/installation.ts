import { randomUUID } from "node:crypto";
import type { Db } from "../client.js";
import { installation } from "../schema/installation.js";

/**
 * This database's installation id, made on first use. Processes that start together on one
 * database may each try to make it; the table's single row lets one insert win, and all read it.
 */
export async function installationId(db: Db): Promise<string> {
  await db.insert(installation).values({ id: randomUUID() }).onConflictDoNothing();
  const [row] = await db.select({ id: installation.id }).from(installation);
  return row!.id;
}
