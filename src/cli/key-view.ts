import type { Command } from "commander";
import type { ApiKeyResource, IssueApiKeyRequest, IssuedApiKey } from "../api/contract/management/api-key-resources.js";
import { API_KEY_SCOPES, DEFAULT_KEY_SCOPES, type ApiKeyScope } from "../domain/vocabulary.js";
import { usageError } from "./exit-codes.js";
import { table, type Output } from "./output.js";
import { timeOption } from "./time-option.js";

/**
 * API keys as the `hearth` CLI and `npm run admin` show and take them: one reading of
 * `--scopes` and `--expires`, one table, one announcement of a new key.
 */

export interface KeyOptions {
  scopes?: string;
  expires?: string;
}

/** `--scopes` and `--expires`, as every command that creates a key takes them. */
export function withKeyOptions(command: Command): Command {
  return command
    .option(
      "--scopes <list>",
      `comma-separated, of ${API_KEY_SCOPES.join(", ")} (default: ${DEFAULT_KEY_SCOPES.join(",")})`,
    )
    .option("--expires <when>", "a span (30d, 12h) or a time (2027-01-31T00:00:00Z); default: never");
}

/** The request that creates a key; a usage error, before anything is sent, for a wrong option. */
export function issueKeyRequest(name: string | undefined, options: KeyOptions): IssueApiKeyRequest {
  return {
    name,
    ...(options.scopes !== undefined ? { scopes: parseScopes(options.scopes) } : {}),
    ...(options.expires !== undefined ? { expireTime: parseExpiry(options.expires) } : {}),
  };
}

/** "inference,models" → the scopes; a usage error names a wrong one. */
export function parseScopes(text: string): ApiKeyScope[] {
  const scopes = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const wrong = scopes.filter((s) => !(API_KEY_SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || wrong.length > 0) {
    throw usageError(
      `Invalid --scopes "${text}": use one or more of ${API_KEY_SCOPES.join(", ")}, separated by commas.`,
    );
  }
  return scopes as ApiKeyScope[];
}

/** "30d", "12h" or an RFC 3339 time → the expiry as RFC 3339; a usage error for anything else or the past. */
export function parseExpiry(text: string, now = Date.now()): string {
  const at = timeOption("--expires", text, "ahead", now);
  if (at <= now) throw usageError(`Invalid --expires "${text}": it is not in the future.`);
  return new Date(at).toISOString();
}

/**
 * 2026-01-02T03:04:05.000Z → 2026-01-02T03:04:05Z; "-" for none. Keys show their times to the
 * second, as `--expires` takes them (tables of models show output.ts's shortTime).
 */
function keyTime(value: string | null): string {
  return value === null ? "-" : value.replace(/\.\d{3}Z$/, "Z");
}

export function keyTable(out: Output, keys: readonly ApiKeyResource[]): string[] {
  if (keys.length === 0) return ["(none)"];
  return table(
    out,
    ["PREFIX", "ACCOUNT", "NAME", "SCOPES", "CREATED", "LAST USED", "EXPIRES", "REVOKED"],
    keys.map((k) => [
      k.prefix,
      k.accountId,
      k.name,
      k.scopes.join(","),
      keyTime(k.createTime),
      keyTime(k.lastUseTime),
      keyTime(k.expireTime),
      keyTime(k.revokeTime),
    ]),
  );
}

/** What is printed once, when a key is made: the only time the key itself is shown. */
export function issuedKeyLines({ key, apiKey }: IssuedApiKey): string[] {
  const expiry = apiKey.expireTime ? `, expiring ${keyTime(apiKey.expireTime)}` : "";
  return [
    `Created key "${apiKey.name}" (prefix ${apiKey.prefix}, scopes ${apiKey.scopes.join(", ")}${expiry}) for account "${apiKey.accountId}".`,
    "It is shown once; store it now:",
    key,
  ];
}

export function revokedKeyLine(key: ApiKeyResource): string {
  return `Revoked key ${key.prefix} ("${key.name}", account "${key.accountId}") at ${keyTime(key.revokeTime)}.`;
}
