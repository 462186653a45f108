/**
 * Builds llama.cpp's CUDA backend from the source node-llama-cpp bundles (its git bundle: no
 * network), for the GPUs of this machine or the architectures named. For where the prebuilt
 * backend cannot run: no code for the GPU's architecture, or PTX newer than the driver.
 *
 *   npm run build:cuda                     the architectures of this machine's GPUs (nvidia-smi)
 *   npm run build:cuda -- --arch "80;90"   those (or HEARTH_CUDA_ARCHITECTURES)
 *   npm run build:cuda -- --portable       no -march=native (x86-64-v3 instead): for a build
 *                                          that runs on other machines, as an image's does
 *
 * The build lands in node-llama-cpp's own folder (llama/localBuilds/linux-x64-cuda-<hash of
 * its options>), recorded as its last build; workers with HEARTH_GPU=auto or cuda load it
 * (src/workers/engine/local-cuda-build.ts). With a GPU here, the build is checked by running a
 * model on it. Exit codes: 0 built (and checked); 1 the build or the check failed; 2 nothing to
 * build with (no nvcc on PATH, no architecture known).
 */
import { execFile, spawn } from "node:child_process";
import { access, readdir } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig, type Config } from "../src/config.js";
import { architectureOfComputeCapability, parseCudaArchitectures } from "../src/config/cuda-architectures.js";
import { describeGpus, findNvidiaGpus } from "../src/process/nvidia-gpus.js";
import { probeCuda } from "../src/workers/engine/cuda-check.js";
import { lastCudaBuild, nodeLlamaCppLlamaDir } from "../src/workers/engine/local-cuda-build.js";

const usage = 'usage: npm run build:cuda -- [--arch "80;90"] [--portable]';

/** What -march=native would pick on a recent server, spelled out: AVX2, FMA, F16C, BMI2 (x86-64-v3). */
const PORTABLE_X64 = { GGML_NATIVE: "OFF", GGML_AVX2: "ON", GGML_FMA: "ON", GGML_F16C: "ON", GGML_BMI2: "ON" };

const { values } = parseArgs({
  options: {
    arch: { type: "string" },
    portable: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}

let config: Config;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  fail(error.message);
}
let named: string[] | undefined = config.worker.cudaArchitectures?.slice();
if (values.arch !== undefined) {
  const parsed = parseCudaArchitectures(values.arch);
  if ("problem" in parsed) fail(`--arch ${values.arch}: ${parsed.problem}`);
  named = parsed.architectures;
}

const nvcc = await nvccVersion();
if (!nvcc.ok) fail(await noNvccMessage());

const nvidia = await findNvidiaGpus();
const architectures = named ?? [
  ...new Set(nvidia.gpus.map((gpu) => architectureOfComputeCapability(gpu.computeCapability))),
];
if (architectures.length === 0) {
  fail(
    `No NVIDIA GPU found here (${nvidia.smiError ?? describeGpus(nvidia)}), so no architecture to build for: name them, ` +
      'e.g. npm run build:cuda -- --arch "80;90" (compute capability 8.0 is 80, 9.0 is 90; nvidia-smi --query-gpu=compute_cap --format=csv).',
  );
}

const llamaDir = nodeLlamaCppLlamaDir();
const cli = path.join(llamaDir, "..", "dist", "cli", "cli.js");
const cmakeOptions: Record<string, string> = {
  CMAKE_CUDA_ARCHITECTURES: architectures.join(";"),
  ...(values.portable ? (process.arch === "x64" ? PORTABLE_X64 : { GGML_NATIVE: "OFF" }) : {}),
};
// node-llama-cpp takes custom CMake options from these variables, and names the build by them.
const env = { ...process.env };
for (const [name, value] of Object.entries(cmakeOptions)) env[`NODE_LLAMA_CPP_CMAKE_OPTION_${name}`] = value;

console.log(
  `Building llama.cpp's CUDA backend for architecture ${cmakeOptions.CMAKE_CUDA_ARCHITECTURES}` +
    `${values.portable ? " (portable CPU code)" : ""} with ${nvcc.version}. It compiles every kernel for each architecture: expect a long build.`,
);
if (!(await exists(path.join(llamaDir, "llama.cpp", ".git")))) {
  console.log("Unpacking llama.cpp's source from node-llama-cpp's bundle:");
  await runCli(["source", "download", "--skipBuild", "--noUsageExample"]);
}
await runCli(["source", "build", "--gpu", "cuda", "--noUsageExample"]);

const build = await lastCudaBuild(llamaDir);
if (!build || build.architectures !== cmakeOptions.CMAKE_CUDA_ARCHITECTURES) {
  console.error(
    `node-llama-cpp finished, but its last build (${path.join(llamaDir, "lastBuild.json")}) is not this one.`,
  );
  process.exit(1);
}
const options = Object.entries(build.cmakeOptions).map(([name, value]) => `${name}=${value}`);
console.log(`\nBuilt ${build.folder} for CUDA architecture ${build.architectures}, in ${build.dir}.`);
console.log(`Its CMake options: ${options.join(" ")}.`);
console.log(
  "Workers load it with HEARTH_GPU=auto or cuda: they ask node-llama-cpp for its last build's options (llama/lastBuild.json).",
);

if (nvidia.present) {
  console.log(`Checking it: a tiny model on ${describeGpus(nvidia)}...`);
  const probe = await probeCuda({ cmakeOptions: build.cmakeOptions });
  if (!probe.ok) {
    console.error(`The build does not run here: ${probe.reason}\n${probe.output.trim()}`);
    process.exit(1);
  }
  console.log(`Checked: kernels run on ${probe.devices.join(", ")} (${probe.build}).`);
} else {
  console.log("No NVIDIA GPU here to check it on; a worker checks it when it starts (HEARTH_GPU_CHECK).");
}

function fail(message: string): never {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}

/** nvcc as PATH finds it, which is the one CMake uses. */
function nvccVersion(): Promise<{ ok: true; version: string } | { ok: false }> {
  return new Promise((resolve) => {
    execFile("nvcc", ["--version"], { timeout: 30_000 }, (error, stdout) => {
      if (error) return resolve({ ok: false });
      const release = /release ([\d.]+)/.exec(stdout)?.[1];
      resolve({ ok: true, version: `nvcc ${release ?? "(version unknown)"}` });
    });
  });
}

/** What to install, or where the toolkit already is when only PATH misses it. */
async function noNvccMessage(): Promise<string> {
  const installed: string[] = [];
  for (const name of await readdir("/usr/local").catch(() => [] as string[])) {
    const bin = path.join("/usr/local", name, "bin");
    if (/^cuda(-[\d.]+)?$/.test(name) && (await exists(path.join(bin, "nvcc")))) installed.push(bin);
  }
  const lines = ["nvcc, CUDA's compiler, is not on PATH: building the CUDA backend needs the CUDA toolkit."];
  if (installed.length > 0) {
    lines.push(
      `The toolkit is installed at ${installed.join(", ")}: run PATH=${installed[0]}:$PATH npm run build:cuda`,
    );
  } else {
    lines.push(
      "Install the CUDA toolkit for your driver (nvidia-smi shows the CUDA version it supports): NVIDIA's cuda-toolkit package " +
        "(https://developer.nvidia.com/cuda-downloads, e.g. apt-get install cuda-toolkit-13-0), or conda's/pip's nvidia-cuda-nvcc; " +
        "with cmake and a C++ compiler. Or build the image instead: docker build -f Dockerfile.cuda .",
    );
  }
  return lines.join("\n");
}

/** node-llama-cpp's CLI, its output streaming through. */
function runCli(args: string[]): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: "inherit", env });
    child.on("close", (code, signal) => {
      if (code === 0) return resolve();
      console.error(
        `node-llama-cpp ${args.slice(0, 2).join(" ")} failed (${signal ?? `exit code ${code}`}): its output is above.`,
      );
      process.exit(1);
    });
  });
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
