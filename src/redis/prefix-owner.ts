import type { RedisClient } from "./connection.js";

/**
 * The Hearth a Redis prefix belongs to: its installation id (db/queries/installation.ts) and,
 * for the people who read a refusal, where its database is.
 */
export interface PrefixOwner {
  id: string;
  database: string;
}

/** One key of its own, so it lives in any slot of a Redis Cluster. */
export const prefixOwnerKey = (prefix: string) => `${prefix}:installation`;

// Sets the owner only where none is (a SET NX that also answers who owns it, in one step: Redis
// 6.2's SET cannot take NX and GET together).
const CLAIM = `
local owner = redis.call('GET', KEYS[1])
if owner then return owner end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`;

/**
 * Claims `prefix` for `owner`, or throws, naming both databases, when another Hearth has it:
 * at start (the process stops) and before anything that changes or deletes what is under the
 * prefix (the reconciler's pass, the sweep of gone workers' queues).
 */
export async function ownPrefix(redis: RedisClient, prefix: string, owner: PrefixOwner): Promise<void> {
  const found = await claimPrefix(redis, prefix, owner);
  if (found.id === owner.id) return;
  throw new Error(
    `The Redis prefix "${prefix}" belongs to another Hearth, whose database is ${found.database}; ` +
      `this Hearth's database is ${owner.database}. Two Hearths on one Redis need a prefix each: ` +
      `set HEARTH_REDIS_PREFIX to one that no other Hearth uses (e.g. ${prefix}-2). If that other ` +
      `Hearth is gone for good, delete the Redis key ${prefixOwnerKey(prefix)} instead.`,
  );
}

/**
 * Claims `prefix` for `owner` unless another Hearth has it; resolves to the owner it has now
 * (`owner` itself, or the other). Every process of one Hearth claims it with the same id, so
 * they all get it, together or one after another. A value Hearth did not write is an owner too.
 */
export async function claimPrefix(redis: RedisClient, prefix: string, owner: PrefixOwner): Promise<PrefixOwner> {
  const raw = (await redis.eval(CLAIM, 1, prefixOwnerKey(prefix), JSON.stringify(owner))) as string;
  try {
    const found = JSON.parse(raw) as Partial<PrefixOwner>;
    if (typeof found.id === "string") return { id: found.id, database: String(found.database ?? "not recorded") };
  } catch {
    // not Hearth's: below
  }
  return { id: raw, database: "not recorded" };
}
