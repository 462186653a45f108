#!/usr/bin/env node
// The `hearth` command. The package has no build step: tsx compiles src/cli on the fly.
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../src/cli/main.ts");
process.exitCode = await runCli(process.argv);
