/**
 * Builds Hearth's batch sampler (native/batch-sampler.cpp): the sequences of one decoded batch
 * sampled in one native call instead of one call each. Workers load it when present
 * (src/workers/engine/batch-sampler.ts); without it they sample as node-llama-cpp does.
 *
 *   npm run build:batch-sampler                    (npm ci runs it too, as part of `prepare`)
 *   npm run build:batch-sampler -- --if-possible   no compiler or git here, or the build
 *                                                  fails: say so, exit 0
 *
 * It compiles that file and node-llama-cpp's own sampler source (llama/addon/AddonSampler.cpp)
 * against node-llama-cpp's addon headers and llama.cpp's headers from the git bundle it ships
 * (no network), then links it once for each llama.cpp binary node-llama-cpp has here: its
 * prebuilt ones for this platform (CPU, CUDA, Vulkan: each names its libraries apart) and the
 * local CUDA build of `npm run build:cuda`. Each goes to node_modules/.hearth/batch-sampler/<binary>;
 * a worker loads the one that links the libraries it loaded. Linux only. About 10 s on 2 cores;
 * a build of the same sources is kept. Exit codes: 0 built or up to date (or, with
 * --if-possible, not built); 1 the build failed; 2 nothing to build with.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  BATCH_SAMPLER_BUILD_FILE,
  BATCH_SAMPLER_FILE,
  type BatchSamplerBuild,
  batchSamplerDir,
  nodeLlamaCppVersion,
} from "../src/workers/engine/batch-sampler.js";
import { pathExists, writeFileAtomically } from "../src/models/formats/atomic-output.js";
import { lastCudaBuild, nodeLlamaCppLlamaDir } from "../src/workers/engine/local-cuda-build.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const SOURCE = path.join(ROOT, "native", "batch-sampler.cpp");
/** llama.cpp's folders whose headers the two sources include (llama.h, ggml's, common.h). */
const HEADER_DIRS = ["include", "ggml/include", "common"];
/** The llama.cpp libraries linked, found by name in a binary's folder (each binary names them apart). */
const LIBRARIES = [/^libllama\.[^/]*so$/, /^libllama-common\.so$/, /^libggml\.[^/]*so$/, /^libggml-base\.so$/];

interface Binary {
  /** The folder name of its build: `prebuilt-linux-x64-cuda`, `local-linux-x64-cuda-<hash>`. */
  name: string;
  dir: string;
  links: string[];
}

const { values } = parseArgs({
  options: {
    "if-possible": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  console.log("usage: npm run build:batch-sampler -- [--if-possible]");
  process.exit(0);
}
const ifPossible = values["if-possible"];

/**
 * Stops: nothing to build with (exit 2) or a failed build (exit 1); with --if-possible, as
 * `npm ci` runs it, either is a warning and exit 0 (workers then sample one call at a time).
 */
function stop(message: string, kind: "unable" | "failed"): never {
  if (ifPossible) {
    const line = `batch sampler not built: ${message} (workers sample one sequence a call)`;
    if (kind === "unable") console.log(line);
    else console.warn(`warning: ${line}`);
    process.exit(0);
  }
  console.error(`batch sampler: ${message}`);
  process.exit(kind === "unable" ? 2 : 1);
}

const run = (file: string, args: string[], cwd?: string) =>
  new Promise<string>((resolve, reject) =>
    execFile(file, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${file} ${args.slice(0, 3).join(" ")}…: ${stderr.trim() || error.message}`))
        : resolve(stdout),
    ),
  );

if (process.platform !== "linux") stop(`${process.platform} is not supported (Linux only)`, "unable");
const compiler = process.env.CXX || "g++";
for (const [tool, args] of [
  [compiler, ["--version"]],
  ["git", ["--version"]],
] as const) {
  await run(tool, [...args]).catch(() => stop(`${tool} was not found`, "unable"));
}

const require = createRequire(import.meta.url);
const llamaDir = nodeLlamaCppLlamaDir();
const version = nodeLlamaCppVersion();
const binaries = await findBinaries();
if (binaries.length === 0)
  stop(`node-llama-cpp has no llama.cpp binary for ${process.platform}-${process.arch} here`, "unable");
const napiInclude = path.dirname(require.resolve("node-addon-api/package.json"));
const nodeApiInclude = path.join(path.dirname(require.resolve("node-api-headers/package.json")), "include");

// What a build is made of: one of the same is kept (prepare runs on every npm ci, and tests run
// it in copies of the repository that share node_modules).
const sources = createHash("sha256")
  .update(await readFile(SOURCE))
  .update(await readFile(path.join(llamaDir, "addon", "AddonSampler.cpp")))
  .update(compiler)
  .digest("hex");
const recordOf = (binary: Binary): BatchSamplerBuild => ({ builtFor: version, links: binary.links, sources });
const recordFile = (binary: Binary) => path.join(batchSamplerDir(), binary.name, BATCH_SAMPLER_BUILD_FILE);
const stale: Binary[] = [];
for (const binary of binaries) {
  const current = await readFile(recordFile(binary), "utf8").catch(() => "");
  if (current !== formatRecord(recordOf(binary))) stale.push(binary);
}
if (stale.length === 0) {
  console.log(`batch sampler up to date: ${batchSamplerDir()} (${binaries.map((b) => b.name).join(", ")})`);
  process.exit(0);
}

const started = performance.now();
const work = await mkdtemp(path.join(os.tmpdir(), "hearth-batch-sampler-"));
try {
  // llama.cpp's headers, from the bundle node-llama-cpp ships (the commit its binaries were built from).
  const source = path.join(work, "llama.cpp");
  await run("git", ["init", "-q", source]);
  await run("git", ["fetch", "-q", "--depth", "1", path.join(llamaDir, "gitRelease.bundle"), "HEAD"], source);
  await run("git", ["checkout", "-q", "FETCH_HEAD", "--", ...HEADER_DIRS], source);

  const flags = ["-O2", "-fPIC", "-fexceptions", "-std=c++17", "-DNAPI_VERSION=7", `-DHEARTH_BUILT_FOR="${version}"`];
  const includes = [
    napiInclude,
    nodeApiInclude,
    path.join(llamaDir, "addon"),
    source,
    ...HEADER_DIRS.map((d) => path.join(source, d)),
  ];
  const objects = [SOURCE, path.join(llamaDir, "addon", "AddonSampler.cpp")].map((file, i) => ({
    file,
    object: path.join(work, `${i}.o`),
  }));
  await Promise.all(
    objects.map(({ file, object }) =>
      run(compiler, [...flags, ...includes.map((dir) => `-I${dir}`), "-c", file, "-o", object]),
    ),
  ).catch((error: Error) => stop(`compiling failed: ${error.message}`, "failed"));

  for (const binary of stale) {
    const library = path.join(work, `${binary.name}.node`);
    await run(compiler, [
      "-shared",
      "-pthread",
      "-o",
      library,
      ...objects.map(({ object }) => object),
      `-L${binary.dir}`,
      ...binary.links.map((name) => `-l:${name}`),
      `-Wl,-rpath,${binary.dir}`,
    ]).catch((error: Error) => stop(`linking against ${binary.dir} failed: ${error.message}`, "failed"));
    // Each file replaced by a rename, the library first and the record last: a worker loading
    // it meanwhile finds the old build or the new one, never none or half of one.
    const target = path.join(batchSamplerDir(), binary.name);
    await writeFileAtomically(path.join(target, BATCH_SAMPLER_FILE), (tmp) => copyFile(library, tmp));
    await writeFileAtomically(path.join(target, BATCH_SAMPLER_BUILD_FILE), (tmp) =>
      writeFile(tmp, formatRecord(recordOf(binary))),
    );
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const built = stale.map((b) => b.name).join(", ");
  console.log(`batch sampler built for node-llama-cpp ${version} in ${seconds} s: ${batchSamplerDir()} (${built})`);
} finally {
  await rm(work, { recursive: true, force: true });
}

/**
 * node-llama-cpp's llama.cpp binaries here: its prebuilt packages for this platform, installed
 * beside it (`@node-llama-cpp/linux-x64`, `-cuda`, `-vulkan`), and its local CUDA build.
 */
async function findBinaries(): Promise<Binary[]> {
  const platform = `${process.platform}-${process.arch}`;
  const scope = path.resolve(llamaDir, "..", "..", "@node-llama-cpp");
  const folders: { name: string; dir: string }[] = [];
  for (const pkg of (await readdir(scope).catch(() => [])).sort()) {
    if (pkg !== platform && !pkg.startsWith(`${platform}-`)) continue;
    for (const bin of await readdir(path.join(scope, pkg, "bins")).catch(() => [])) {
      folders.push({ name: `prebuilt-${bin}`, dir: path.join(scope, pkg, "bins", bin) });
    }
  }
  const cuda = await lastCudaBuild(llamaDir);
  if (cuda) folders.push({ name: `local-${cuda.folder}`, dir: path.join(cuda.dir, "Release") });
  const found: Binary[] = [];
  for (const { name, dir } of folders) {
    if (!(await pathExists(path.join(dir, "llama-addon.node")))) continue;
    const links = (await readdir(dir)).filter((file) => LIBRARIES.some((pattern) => pattern.test(file))).sort();
    if (LIBRARIES.every((pattern) => links.some((file) => pattern.test(file)))) found.push({ name, dir, links });
  }
  return found;
}

function formatRecord(record: BatchSamplerBuild): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}
