import { and, asc, eq, getTableColumns, gt, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { apiKeys, type ApiKey, type ApiKeyScope } from "../schema/api-keys.js";

/** An API key as listings show it: everything but the hash. */
export type ApiKeySummary = Omit<ApiKey, "hash">;

export interface InsertApiKeyInput {
  accountId: string;
  name: string;
  scopes: ApiKeyScope[];
  prefix: string;
  expiresAt?: Date | null;
  /** SHA-256 hex of the full key. */
  hash: string;
}

const { hash: _hash, ...summaryColumns } = getTableColumns(apiKeys);

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Stores a key's prefix and hash; null when the prefix is taken. */
export async function insertApiKey(db: Db, input: InsertApiKeyInput): Promise<ApiKeySummary | null> {
  const rows = await db
    .insert(apiKeys)
    .values(input)
    .onConflictDoNothing({ target: apiKeys.prefix })
    .returning(summaryColumns);
  return rows[0] ?? null;
}

/** Keys of one account, or of every account; oldest first. */
export async function listApiKeys(db: Db, accountId?: string): Promise<ApiKeySummary[]> {
  return db
    .select(summaryColumns)
    .from(apiKeys)
    .where(accountId === undefined ? undefined : eq(apiKeys.accountId, accountId))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.prefix));
}

/** The full row, hash included, for authentication. */
export async function findApiKeyByPrefix(db: Db, prefix: string): Promise<ApiKey | null> {
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.prefix, prefix)).limit(1);
  return rows[0] ?? null;
}

/** A key that is neither revoked nor expired, by ID (a web session's key); null otherwise. */
export async function findActiveApiKey(db: Db, id: string): Promise<ApiKeySummary | null> {
  if (!UUID_PATTERN.test(id)) return null;
  const rows = await db
    .select(summaryColumns)
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.id, id),
        isNull(apiKeys.revokedAt),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`)),
      ),
    )
    .limit(1);
  return rows[0] ?? null;
}

export async function apiKeyHashExists(db: Db, hash: string): Promise<boolean> {
  const rows = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.hash, hash)).limit(1);
  return rows.length > 0;
}

/**
 * Revokes a key by prefix or ID, optionally only within one account. Revoking twice
 * keeps the first time. Null when no such key.
 */
export async function revokeApiKey(
  db: Db,
  match: { prefix: string } | { id: string },
  opts: { accountId?: string } = {},
): Promise<ApiKeySummary | null> {
  if ("id" in match && !UUID_PATTERN.test(match.id)) return null;
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
    .where(
      and(
        "id" in match ? eq(apiKeys.id, match.id) : eq(apiKeys.prefix, match.prefix),
        opts.accountId === undefined ? undefined : eq(apiKeys.accountId, opts.accountId),
      ),
    )
    .returning(summaryColumns);
  return rows[0] ?? null;
}

/**
 * Records a use of the key, at most once per `minIntervalSeconds` (the WHERE clause
 * makes concurrent touches cheap no-ops). True when the row was written.
 */
export async function touchApiKeyLastUsed(db: Db, keyId: string, minIntervalSeconds = 60): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(apiKeys.id, keyId),
        or(
          isNull(apiKeys.lastUsedAt),
          lt(apiKeys.lastUsedAt, sql`now() - make_interval(secs => ${minIntervalSeconds})`),
        ),
      ),
    )
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}
