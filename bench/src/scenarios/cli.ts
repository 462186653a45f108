import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { round, summarize } from "../stats.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
/** What npm links as the `hearth` command. */
const LAUNCHER = path.join(ROOT, "bin", "hearth.js");

interface Run {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * 14. CLI start: `hearth whoami` as a person types it, one after another: a new Node process
 * running the `hearth` launcher against the running Hearth, timed from spawn to exit (Node's own
 * start, the CLI's imports, one authenticated request). Then as many through `npx hearth`, the
 * README's spelling, whose difference is npm's own start.
 */
export async function cliScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const configDir = await mkdtemp(path.join(os.tmpdir(), "hearth-bench-cli-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HEARTH_BASE_URL: ctx.cluster.url,
    HEARTH_API_KEY: ctx.cluster.apiKey,
    HEARTH_CONFIG_DIR: configDir,
    NO_COLOR: "1",
  };
  const time = async (command: string, args: string[]): Promise<Run> => {
    const started = performance.now();
    const run = await exited(command, args, env);
    const ms = performance.now() - started;
    if (run.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
    return { ...run, ms };
  };
  try {
    progress.step("cli: warm-up");
    const first = await time(process.execPath, [LAUNCHER, "whoami", "--output", "json"]);
    const direct: Run[] = [];
    for (let i = 0; i < sizes.cliRuns; i++) {
      progress.step(`cli: hearth whoami ${i + 1}/${sizes.cliRuns}`);
      direct.push(await time(process.execPath, [LAUNCHER, "whoami"]));
    }
    const npx: Run[] = [];
    for (let i = 0; i < sizes.cliRuns; i++) {
      progress.step(`cli: npx hearth whoami ${i + 1}/${sizes.cliRuns}`);
      npx.push(await time("npx", ["--no-install", "hearth", "whoami"]));
    }
    const launcher = summarize(direct.map((r) => r.ms));
    const viaNpx = summarize(npx.map((r) => r.ms));
    // The launcher says on stderr when it runs the source because the build is out of date.
    const warnings = [...new Set([first, ...direct].map((r) => r.stderr.trim()).filter(Boolean))];
    return {
      id: "cli",
      title: "CLI start: `hearth whoami`, a new process each time",
      figures: [
        figure("hearth whoami p50", round(launcher.p50), "ms"),
        figure("hearth whoami p99", round(launcher.p99), "ms"),
        figure("npx hearth whoami p50", round(viaNpx.p50), "ms"),
      ],
      targets: [target("hearth whoami p50", round(launcher.p50), "<=", 300, "ms")],
      notes: [
        `${sizes.cliRuns} runs each, one after another, after one warm-up run; node ${process.version}`,
        ...warnings.map((w) => `the launcher said: ${w}`),
      ],
      details: {
        launcherMs: direct.map((r) => round(r.ms)),
        npxMs: npx.map((r) => round(r.ms)),
        account: JSON.parse(first.stdout).accountId,
        warnings,
      },
    };
  } finally {
    await rm(configDir, { recursive: true, force: true });
  }
}

function exited(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Omit<Run, "ms">> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
