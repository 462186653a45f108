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
 * `hearth create key`, `hearth list keys`, `hearth revoke key`: an account's API keys. With an
 * admin key, through the operators' endpoints (any account); else through the account's own
 * (`/v1/accounts/<account>/api-keys`: a key with the models scope, which makes no key stronger
 * than itself; docs/security.md).
 */
export function registerKeyCommands({ create, list, revoke }: Verbs): void {
  examples(
    withKeyOptions(
      create
        .command("key")
        .description("Create an API key for the account (printed once); with a models key, only scopes it has itself")
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

/** The key endpoints the signed-in key may use: the operators' for an admin key, else its account's own. */
async function keyEndpoints(ctx: CliContext) {
  const client = ctx.client();
  const admin = (await ctx.whoami()).scopes.includes("admin");
  return {
    issue: admin ? client.adminIssueKey : client.issueKey,
    list: async (accountId: string) => (await (admin ? client.adminListKeys : client.listKeys)(accountId)).apiKeys,
    revoke: (accountId: string, prefix: string) =>
      admin ? client.adminRevokeKey(prefix) : client.revokeKey(accountId, prefix),
  };
}

async function createKey(ctx: CliContext, name: string, options: KeyOptions) {
  // Checked before any request: a usage error costs nothing.
  const request = issueKeyRequest(name, options);
  const issued = await (await keyEndpoints(ctx)).issue(await ctx.accountId(), request);
  ctx.out.result(
    { key: issued.key, ...issued.apiKey },
    () => issuedKeyLines(issued),
    () => issued.key,
  );
}

async function listKeys(ctx: CliContext) {
  const apiKeys = await (await keyEndpoints(ctx)).list(await ctx.accountId());
  ctx.out.result(
    apiKeys,
    () => keyTable(ctx.out, apiKeys),
    () => apiKeys.map((k) => k.prefix),
  );
}

async function revokeKey(ctx: CliContext, prefix: string) {
  const key = await (await keyEndpoints(ctx)).revoke(await ctx.accountId(), prefix);
  ctx.out.result(
    key,
    () => revokedKeyLine(key),
    () => key.prefix,
  );
}
