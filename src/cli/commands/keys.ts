import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import {
  issueKeyRequest,
  issuedKeyLines,
  keyTable,
  revokedKeyLine,
  withKeyOptions,
  type KeyOptions,
} from "../key-view.js";

/**
 * `hearth create key`, `hearth list keys`, `hearth revoke key`: an account's API keys, through
 * the server's admin endpoints (the signed-in key needs the admin scope).
 */
export function registerKeyCommands({ create, list, revoke }: Verbs): void {
  examples(
    withKeyOptions(
      create
        .command("key")
        .description("Create an API key for the account (printed once); needs a key with the admin scope")
        .argument("[name]", "what the key is for", "default"),
    ).action(withContext(createKey)),
    [
      "hearth create key web-frontend --scopes inference --expires 30d",
      "hearth create key ci --scopes inference,models --output json",
    ],
  );
  examples(
    list
      .command("keys")
      .description("List the account's API keys: prefix, scopes, last use, expiry (never the keys)")
      .action(withContext(listKeys)),
    ["hearth list keys", "hearth list keys --account-id acme --output json"],
  );
  examples(
    revoke
      .command("key")
      .description("Revoke an API key by its prefix; every server refuses it within its auth cache TTL")
      .argument("<prefix>", "the key's first 12 characters, as `hearth list keys` shows them")
      .action(withContext(revokeKey)),
    ["hearth revoke key hth_AbCdEfGh"],
  );
}

async function createKey(ctx: CliContext, name: string, options: KeyOptions) {
  // Checked before any request: a usage error costs nothing.
  const request = issueKeyRequest(name, options);
  const issued = await ctx.client().adminIssueKey(await ctx.accountId(), request);
  ctx.out.result(
    { key: issued.key, ...issued.apiKey },
    () => issuedKeyLines(issued),
    () => issued.key,
  );
}

async function listKeys(ctx: CliContext) {
  const { apiKeys } = await ctx.client().adminListKeys(await ctx.accountId());
  ctx.out.result(
    apiKeys,
    () => keyTable(ctx.out, apiKeys),
    () => apiKeys.map((k) => k.prefix),
  );
}

async function revokeKey(ctx: CliContext, prefix: string) {
  const key = await ctx.client().adminRevokeKey(prefix);
  ctx.out.result(
    key,
    () => revokedKeyLine(key),
    () => key.prefix,
  );
}
