import { sql } from "drizzle-orm";
import type { Db } from "./client.js";

/**
 * Keys of the PostgreSQL advisory locks Hearth takes, as `(namespace, key)` pairs
 * for the two-int4 forms of `pg_advisory_lock` / `pg_advisory_xact_lock`.
 */
const NAMESPACE = 0x48525448; // "HRTH"

export const advisoryLocks = {
  /** Held while migrations run, so replicas starting together apply them once. */
  migrate: [NAMESPACE, 1],
  /** Held by the bootstrap transaction, so only one process creates the first admin key. */
  bootstrap: [NAMESPACE, 2],
} as const satisfies Record<string, readonly [number, number]>;

type LockName = keyof typeof advisoryLocks;

/** Takes a lock held until the end of the transaction `tx` runs in. */
export async function lockForTransaction(tx: Db, name: LockName): Promise<void> {
  const [namespace, key] = advisoryLocks[name];
  await tx.execute(sql`select pg_advisory_xact_lock(${namespace}::int4, ${key}::int4)`);
}
