#!/usr/bin/env node
// The `hearth` command. It runs the CLI that `npm run build` compiled into dist/cli (npm ci runs
// the build as `prepare`). When that build is missing or older than its sources, it runs the
// sources through tsx instead, seconds slower, and says so: never a stale CLI.
import { pathToFileURL } from "node:url";
import { COMPILED_CLI_ENTRY, outdatedBecause } from "./compiled-cli.js";

const outdated = outdatedBecause();
let cli;
if (outdated === null) {
  cli = await import(pathToFileURL(COMPILED_CLI_ENTRY).href);
} else {
  process.stderr.write(`hearth: ${outdated}: running its sources (slower); \`npm run build\` compiles it.\n`);
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import("../src/cli/main.ts");
}
process.exitCode = await cli.runCli(process.argv);
// The command has returned: nothing is left to do but write out what it printed. Exiting then,
// rather than when the last handle closes (kept-alive sockets, the upgrade's fetch), saves 30 ms
// of a `hearth whoami` here, and far more after a fetch (undici's parser compiling to the end).
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((done) => stream.write("", done))));
process.exit();
