import crypto from "node:crypto";
import type { Db } from "../db/client.js";
import { getAccount } from "../db/queries/accounts.js";
import { findApiKeyByPrefix, insertApiKey, touchApiKeyLastUsed, type ApiKeySummary } from "../db/queries/api-keys.js";
import type { ApiKeyScope } from "../db/schema/api-keys.js";
import { BUILTIN_ACCOUNT_ID } from "../domain/model-name.js";
import { AppError } from "../errors.js";

/**
 * API keys: `hth_` followed by 40 URL-safe random characters. The database keeps the
 * first PREFIX_LENGTH characters (shown in listings, used for lookup) and the SHA-256
 * of the whole key. An operator-chosen HEARTH_ADMIN_KEY may have another shape, so
 * authentication accepts any printable key of a plausible length.
 */

export const API_KEY_PREFIX = "hth_";
export const PREFIX_LENGTH = 12;
const RANDOM_CHARS = 40;
const MIN_KEY_LENGTH = 20;
const MAX_KEY_LENGTH = 256;
const PRESENTABLE_KEY = /^[\x21-\x7e]+$/;
/** Seconds between two writes of a key's last_used_at. */
const TOUCH_INTERVAL_SECONDS = 60;

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  hash: string;
}

export interface AuthenticatedKey {
  accountId: string;
  keyId: string;
  scopes: readonly ApiKeyScope[];
  prefix: string;
}

export function generateApiKey(): GeneratedApiKey {
  // 30 random bytes are exactly 40 base64url characters.
  const key = API_KEY_PREFIX + crypto.randomBytes((RANDOM_CHARS * 3) / 4).toString("base64url");
  return { key, prefix: apiKeyPrefix(key), hash: hashApiKey(key) };
}

/** SHA-256 of the key, lowercase hex. */
export function hashApiKey(key: string): string {
  return crypto.createHash("sha256").update(key, "utf8").digest("hex");
}

export function apiKeyPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}

/** Whether a string could be a key at all (checked before any database lookup). */
export function isPresentableApiKey(key: string): boolean {
  return key.length >= MIN_KEY_LENGTH && key.length <= MAX_KEY_LENGTH && PRESENTABLE_KEY.test(key);
}

/**
 * The key's account and scopes, or null for an unknown, wrong, revoked, expired or malformed key.
 * The hash comparison takes constant time.
 */
export async function authenticateApiKey(db: Db, presentedKey: string): Promise<AuthenticatedKey | null> {
  if (!isPresentableApiKey(presentedKey)) return null;
  const presentedHash = Buffer.from(hashApiKey(presentedKey), "hex");
  const row = await findApiKeyByPrefix(db, apiKeyPrefix(presentedKey));
  // Compare against a dummy when the prefix is unknown, so both paths cost the same.
  // Stored hashes are 64 hex digits (a check constraint), so lengths always match.
  const storedHash = row ? Buffer.from(row.hash, "hex") : Buffer.alloc(presentedHash.length);
  const matches = storedHash.length === presentedHash.length && crypto.timingSafeEqual(storedHash, presentedHash);
  if (!row || !matches || row.revokedAt !== null) return null;
  if (row.expiresAt !== null && row.expiresAt.getTime() <= Date.now()) return null;
  const lastUsed = row.lastUsedAt?.getTime() ?? 0;
  if (Date.now() - lastUsed >= TOUCH_INTERVAL_SECONDS * 1000) {
    await touchApiKeyLastUsed(db, row.id, TOUCH_INTERVAL_SECONDS);
  }
  return { accountId: row.accountId, keyId: row.id, scopes: row.scopes, prefix: row.prefix };
}

export interface IssueApiKeyInput {
  accountId: string;
  name: string;
  scopes: readonly ApiKeyScope[];
  /** When the key stops working; never when absent. */
  expiresAt?: Date;
  /** A key chosen by the operator (HEARTH_ADMIN_KEY); generated when absent. */
  key?: string;
}

/**
 * Creates a key for an existing account and returns it: the only time the full key
 * is available. Throws AppError invalid_request for an unusable given key and
 * conflict when its prefix is taken.
 */
export async function issueApiKey(db: Db, input: IssueApiKeyInput): Promise<{ key: string; apiKey: ApiKeySummary }> {
  if (input.key !== undefined && !isPresentableApiKey(input.key)) {
    throw new AppError(
      "invalid_request",
      `An API key must be ${MIN_KEY_LENGTH}–${MAX_KEY_LENGTH} printable ASCII characters without spaces.`,
      { param: "key" },
    );
  }
  if (input.accountId === BUILTIN_ACCOUNT_ID) {
    // Its models are the operator's base models: a key of its own could change them.
    throw new AppError("invalid_request", `No API key can be made for the built-in account "${BUILTIN_ACCOUNT_ID}".`, {
      param: "account_id",
    });
  }
  if (input.scopes.length === 0) {
    throw new AppError("invalid_request", "A key needs at least one scope.", { param: "scopes" });
  }
  if (input.expiresAt !== undefined && input.expiresAt.getTime() <= Date.now()) {
    throw new AppError("invalid_request", "A key's expiry must be in the future.", { param: "expireTime" });
  }
  if (!(await getAccount(db, input.accountId))) {
    throw new AppError("not_found", `Account "${input.accountId}" does not exist.`, { param: "account_id" });
  }
  // A generated prefix carries 48 random bits; a retry is for the astronomically unlucky.
  for (let attempt = 0; attempt < 3; attempt++) {
    const generated =
      input.key === undefined
        ? generateApiKey()
        : { key: input.key, prefix: apiKeyPrefix(input.key), hash: hashApiKey(input.key) };
    const apiKey = await insertApiKey(db, {
      accountId: input.accountId,
      name: input.name,
      scopes: [...new Set(input.scopes)],
      expiresAt: input.expiresAt ?? null,
      prefix: generated.prefix,
      hash: generated.hash,
    });
    if (apiKey) return { key: generated.key, apiKey };
    if (input.key !== undefined) break;
  }
  throw new AppError("conflict", "An API key with the same first characters already exists; choose another key.");
}
