import { normalizeServer } from "./api-client.js";
import type { Profile } from "./config-file.js";
import { usageError } from "./exit-codes.js";

/**
 * Which Hearth server a command talks to, resolved the same way by the `hearth` CLI and by
 * `npm run admin`: the --server option, else HEARTH_BASE_URL, else the server `hearth signin`
 * remembered in the profile, else the caller's default (this machine's Hearth).
 */

export const SERVER_VARIABLE = "HEARTH_BASE_URL";

export interface ServerSetting {
  url: string;
  from: "option" | "environment" | "profile" | "default";
}

export function resolveServer(
  option: string | undefined,
  env: NodeJS.ProcessEnv,
  profile: Profile | undefined,
  fallback: string,
): ServerSetting {
  const [text, from]: [string, ServerSetting["from"]] = option
    ? [option, "option"]
    : env[SERVER_VARIABLE]
      ? [env[SERVER_VARIABLE], "environment"]
      : profile?.server
        ? [profile.server, "profile"]
        : [fallback, "default"];
  try {
    return { url: normalizeServer(text), from };
  } catch (e) {
    const where = { option: "--server", environment: SERVER_VARIABLE, profile: "the profile", default: "the default" };
    throw usageError(
      `Invalid server address in ${where[from]}: ${(e as Error).message}.`,
      "Pass e.g. --server http://127.0.0.1:8080.",
    );
  }
}
