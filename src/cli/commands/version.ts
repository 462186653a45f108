import { HEARTH_VERSION } from "../../package-info.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";

/** `hearth version`: this CLI's version and the server's (GET /v1/version, which needs no key). */
export function registerVersionCommand({ program }: Verbs): void {
  examples(
    program.command("version").description("Show the CLI's version and the server's").action(withContext(version)),
    ["hearth version", "hearth version --server http://gpu-box:8080 --output json"],
  );
}

async function version(ctx: CliContext): Promise<void> {
  let serverVersion: string | null = null;
  let failure: unknown;
  try {
    serverVersion = (await ctx.anonymousClient().version()).version;
  } catch (e) {
    failure = e;
  }
  const { out } = ctx;
  out.result(
    { cli: HEARTH_VERSION, server: { url: ctx.server, version: serverVersion } },
    () => [`hearth CLI ${HEARTH_VERSION}`, `server     ${serverVersion ?? "unknown"} (${ctx.server})`],
    () => [HEARTH_VERSION, ...(serverVersion ? [serverVersion] : [])],
  );
  if (failure) throw failure;
}
