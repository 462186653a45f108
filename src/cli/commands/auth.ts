import { HearthApiError, HearthClient, normalizeServer, type WhoAmI } from "../api-client.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import { writeProfile } from "../config-file.js";
import { apiKeyFromEnv, type CliContext } from "../context.js";
import { CliError, EXIT, usageError } from "../exit-codes.js";
import { details } from "../output.js";
import { ask, isInteractive, readStdin } from "../prompt.js";
import { accountTable } from "../account-view.js";

/** signin, whoami, list accounts. */
export function registerAuthCommands({ program, list }: Verbs): void {
  examples(
    program
      .command("signin")
      .description("Sign in to a Hearth server: checks the API key and remembers it and the server in auth.ini")
      .action(withContext(signin)),
    [
      "hearth signin                                   # asks for the server and the key",
      "hearth signin --server http://gpu-box:8080 < key.txt   # later commands use this server",
      "cat data/admin-api-key | hearth signin",
      "hearth signin --profile staging --server https://hearth.staging.example.com",
    ],
  ).addHelpText(
    "after",
    "The key is saved in $HEARTH_CONFIG_DIR/auth.ini, else $XDG_CONFIG_HOME/hearth/auth.ini, else ~/.config/hearth/auth.ini (mode 0600).\n",
  );

  examples(
    program
      .command("whoami")
      .description("Show the API key's account, the key's prefix and the server")
      .action(withContext(whoami)),
    ["hearth whoami", "hearth whoami --output json"],
  );

  examples(
    list
      .command("accounts")
      .description("List the accounts the API key may use, with their IDs")
      .action(withContext(listAccounts)),
    ["hearth list accounts", "hearth list accounts --quiet          # IDs only"],
  );
}

async function signin(ctx: CliContext): Promise<void> {
  const interactive = isInteractive();
  let server = ctx.server;
  const { from } = ctx.serverSetting;
  if (interactive && from !== "option" && from !== "environment") {
    // The remembered server, else where `npm start` listens by default.
    const answer = await ask("Hearth server address", { defaultValue: ctx.server });
    try {
      server = normalizeServer(answer);
    } catch (e) {
      throw usageError(
        `Invalid server address: ${(e as Error).message}.`,
        "Run `hearth signin` again with e.g. http://127.0.0.1:8080.",
      );
    }
  }
  let key = ctx.options.apiKey;
  if (!key) key = interactive ? await ask("API key", { hidden: true }) : firstLine(await readStdin());
  key ||= apiKeyFromEnv(ctx.env);
  if (!key) {
    throw usageError(
      "No API key was given.",
      interactive
        ? "Paste the key when asked (data/admin-api-key holds the first one)."
        : "Pipe it in (`hearth signin < key-file`) or pass --api-key.",
    );
  }

  const client = new HearthClient(server, key);
  let who: WhoAmI;
  try {
    who = await client.whoami();
  } catch (e) {
    if (e instanceof HearthApiError && e.status === 401) {
      throw new CliError(
        EXIT.notSignedIn,
        `The server at ${server} refused this API key (${e.message.replace(/\.$/, "")}).`,
        "Check the key (`npm run admin -- list-keys` shows the first characters of each) and run `hearth signin` again.",
      );
    }
    throw e;
  }
  const { accounts } = await client.listAccounts();
  await writeProfile(ctx.authFile, ctx.profileName, {
    ...ctx.profile,
    server,
    api_key: key,
    account_id: who.accountId,
  });

  const { out } = ctx;
  out.result(
    {
      server,
      profile: ctx.profileName,
      configFile: ctx.authFile,
      accountId: who.accountId,
      keyPrefix: who.keyPrefix,
      scopes: who.scopes,
      accounts,
    },
    () => [
      `Signed in to ${server} as account ${out.paint(who.accountId, "bold")} with key ${who.keyPrefix}… (${who.scopes.join(", ")}).`,
      `Saved to ${ctx.authFile} (profile ${ctx.profileName}): later commands use this server and key.`,
      "",
      ...accountTable(out, accounts),
    ],
    () => who.accountId,
  );
}

async function whoami(ctx: CliContext): Promise<void> {
  const who = await ctx.client().whoami();
  const { out } = ctx;
  out.result(
    { server: ctx.server, ...who },
    () =>
      details([
        ["Account", `${out.paint(who.accountId, "bold")} (${who.account.displayName})`],
        ["Key", `${who.keyPrefix}… (scopes ${who.scopes.join(", ")}; key ID ${who.keyId})`],
        ["Server", ctx.server],
        [
          "Key from",
          ctx.apiKey!.from === "profile" ? `${ctx.authFile} (profile ${ctx.profileName})` : ctx.apiKey!.from,
        ],
      ]),
    () => who.accountId,
  );
}

async function listAccounts(ctx: CliContext): Promise<void> {
  const { accounts } = await ctx.client().listAccounts();
  ctx.out.result(
    { accounts },
    () => accountTable(ctx.out, accounts),
    () => accounts.map((a) => a.accountId),
  );
}

function firstLine(text: string): string | undefined {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .find((line) => line !== "");
}
