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
