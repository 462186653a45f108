import type { Command } from "commander";
import type { WhoAmI } from "../api/contract/management/resources.js";
import { HearthClient } from "./api-client.js";
import { DEFAULT_PROFILE, authFilePath, readProfiles, type Profile } from "./config-file.js";
import { CliError, EXIT } from "./exit-codes.js";
import { Output, type OutputFormat } from "./output.js";
import { resolveServer, type ServerSetting } from "./server-setting.js";

/**
 * What every command runs with: the global options, resolved against the environment and
 * the profile in auth.ini. Precedence: option, then environment, then the profile, then
 * the default (the server: server-setting.ts, shared with `npm run admin`).
 */

/** Where `npm start` listens with the default HOST and PORT. */
export const DEFAULT_SERVER = "http://127.0.0.1:8080";

export interface GlobalOptions {
  server?: string;
  apiKey?: string;
  accountId?: string;
  profile?: string;
  output: OutputFormat;
  quiet?: boolean;
  color: boolean;
}

export interface ApiKeySetting {
  value: string;
  from: "option" | "environment" | "profile";
}

export class CliContext {
  private signedIn: Promise<WhoAmI> | undefined;

  constructor(
    readonly options: GlobalOptions,
    readonly out: Output,
    readonly authFile: string,
    readonly profileName: string,
    readonly profile: Profile,
    readonly serverSetting: ServerSetting,
    readonly apiKey: ApiKeySetting | undefined,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  get server(): string {
    return this.serverSetting.url;
  }

  /** A client with the API key; no key is exit code 3. */
  client(): HearthClient {
    if (!this.apiKey) {
      throw new CliError(
        EXIT.notSignedIn,
        "Not signed in.",
        "Run `hearth signin`, or set HEARTH_API_KEY (or pass --api-key).",
      );
    }
    return new HearthClient(this.server, this.apiKey.value);
  }

  /** A client for the routes that need no key (the version). */
  anonymousClient(): HearthClient {
    return new HearthClient(this.server, this.apiKey?.value);
  }

  /** --account-id, else the key's own account (remembered by signin, else asked of the server). */
  accountId(): Promise<string> {
    if (this.options.accountId) return Promise.resolve(this.options.accountId);
    if (this.apiKey?.from === "profile" && this.profile.account_id) return Promise.resolve(this.profile.account_id);
    return this.whoami().then((w) => w.accountId);
  }

  /** Who the API key is (asked of the server once per command). */
  whoami(): Promise<WhoAmI> {
    this.signedIn ??= this.client().whoami();
    return this.signedIn;
  }
}

export async function createContext(command: Command, env: NodeJS.ProcessEnv = process.env): Promise<CliContext> {
  const options = command.optsWithGlobals<GlobalOptions>();
  const out = new Output(
    { format: options.output, quiet: options.quiet === true, color: options.color !== false },
    process.stdout,
    process.stderr,
    env,
  );
  const file = authFilePath(env);
  const profileName = options.profile ?? DEFAULT_PROFILE;
  const profiles = await readProfiles(file);
  const profile = profiles.get(profileName);
  if (options.profile && !profile && command.name() !== "signin") {
    throw new CliError(
      EXIT.notSignedIn,
      `There is no profile "${profileName}" in ${file}.`,
      `Run \`hearth signin --profile ${profileName}\`.`,
    );
  }
  return new CliContext(
    options,
    out,
    file,
    profileName,
    profile ?? {},
    resolveServer(options.server, env, profile, DEFAULT_SERVER),
    apiKeySetting(options, env, profile),
    env,
  );
}

function apiKeySetting(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv,
  profile: Profile | undefined,
): ApiKeySetting | undefined {
  if (options.apiKey) return { value: options.apiKey, from: "option" };
  const fromEnv = apiKeyFromEnv(env);
  if (fromEnv) return { value: fromEnv, from: "environment" };
  if (profile?.api_key) return { value: profile.api_key, from: "profile" };
  return undefined;
}

/** The API key the environment gives: HEARTH_API_KEY, else SERVICE_API_KEY (the name Fireworks' tools use). */
export function apiKeyFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  return env.HEARTH_API_KEY || env.SERVICE_API_KEY || undefined;
}
