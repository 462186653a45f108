/**
 * How long a stream nobody reads any more is kept running, for its client to resume it (on
 * any API process) before its work is stopped: the API waits this long after its client
 * left, a worker this long after no API process listens (requests/stream.ts). Part of the
 * HTTP contract's promise, so it lives here, where the contract can read it.
 */
export const ORPHAN_GRACE_MS = 500;
