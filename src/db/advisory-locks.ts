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
  /**
   * Usage records' roll-up against the meter's writes: each roll-up transaction holds it
   * exclusively, each write of records shared (queries/usage-rollup.ts).
   */
  usageRollup: [NAMESPACE, 3],
} as const satisfies Record<string, readonly [number, number]>;

type LockName = keyof typeof advisoryLocks;

/**
 * Takes a lock held until the end of the transaction `tx` runs in: exclusive, or shared with
 * other shared holders (and waiting for an exclusive one).
 */
export async function lockForTransaction(tx: Db, name: LockName, mode: "exclusive" | "shared" = "exclusive") {
  const [namespace, key] = advisoryLocks[name];
  await tx.execute(
    mode === "shared"
      ? sql`select pg_advisory_xact_lock_shared(${namespace}::int4, ${key}::int4)`
      : sql`select pg_advisory_xact_lock(${namespace}::int4, ${key}::int4)`,
  );
}
