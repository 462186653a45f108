import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { nodeLlamaCppLlamaDir } from "./local-cuda-build.js";

/** What native/batch-sampler.cpp answers: a token per sequence (-1: none, -2: failed) and each failure's message. */
export interface BatchSampled {
  tokens: Int32Array;
  errors: (string | undefined)[];
}

/** The native batch sampler: the sequences of one decoded batch sampled in one call (native/batch-sampler.cpp). */
export interface BatchSampler {
  sampleTokens(context: object, indexes: Int32Array, samplers: object[], threads: number): Promise<BatchSampled>;
}

/** The batch sampler as a context's samplings use it (sampling-guard.ts). */
export interface SamplingBatches {
  sampler: BatchSampler;
  /** How many threads one batch of `count` samplings may use. */
  threads: (count: number) => number;
}

/** A sequence's token in a batch whose sampling found none (node-llama-cpp's own "no token"). */
export const BATCH_NO_TOKEN = -1;
/** A sequence's token in a batch whose sampling threw; its message is in `errors`. */
export const BATCH_FAILED = -2;

/** What `npm run build:batch-sampler` writes beside its library, read before loading it. */
export interface BatchSamplerBuild {
  /** The node-llama-cpp version whose addon headers it was compiled against. */
  builtFor: string;
  /** The llama.cpp libraries it links, by the names the dynamic loader matches (their sonames). */
  links: string[];
  /** A hash of what it was built from: the two sources and the compiler. */
  sources: string;
}

export type BatchSamplerLoad = { sampler: BatchSampler; file: string } | { sampler: undefined; reason: string };

export const BATCH_SAMPLER_FILE = "batch-sampler.node";
export const BATCH_SAMPLER_BUILD_FILE = "build.json";

/**
 * Where the builds live, one folder per llama.cpp binary: inside node_modules, beside the
 * node-llama-cpp they were built for, so a fresh install (which may bring another version)
 * starts without them and `npm ci` rebuilds them.
 */
export function batchSamplerDir(): string {
  return path.resolve(nodeLlamaCppLlamaDir(), "..", "..", ".hearth", "batch-sampler");
}

/** The installed node-llama-cpp's version. */
export function nodeLlamaCppVersion(): string {
  const file = path.resolve(nodeLlamaCppLlamaDir(), "..", "package.json");
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

const HOW_TO_BUILD = "`npm run build:batch-sampler` builds it (a C++ compiler and git are needed)";

/**
 * Loads the batch sampler, once the engine's llama.cpp libraries are loaded: the build (one per
 * llama.cpp binary node-llama-cpp has here) that was made for this node-llama-cpp and links the
 * very libraries this process loaded. Otherwise it says why not, and the engine samples each
 * sequence with node-llama-cpp's own call.
 *
 * A build names node-llama-cpp's llama.cpp libraries by soname (`libllama.v0.4.0.so`, or
 * `libllama.cuda.v0.4.0.so` for its CUDA binary); the dynamic loader reuses a library already
 * loaded under that name, so the sampler runs on the same llama.cpp as the engine. A build whose
 * libraries this process has not loaded would bring in second copies: never loaded.
 */
export function loadBatchSampler(
  dir = batchSamplerDir(),
  loaded: () => string[] = loadedLibraries,
  installed: () => string = nodeLlamaCppVersion,
): BatchSamplerLoad {
  let builds: string[];
  try {
    builds = readdirSync(dir).sort();
  } catch {
    builds = [];
  }
  const version = installed();
  const present = new Set(loaded());
  const refusals: string[] = [];
  for (const name of builds) {
    const folder = path.join(dir, name);
    let build: BatchSamplerBuild;
    try {
      build = JSON.parse(readFileSync(path.join(folder, BATCH_SAMPLER_BUILD_FILE), "utf8")) as BatchSamplerBuild;
    } catch {
      continue;
    }
    if (build.builtFor !== version) {
      refusals.push(`${name} was built for node-llama-cpp ${build.builtFor}, this is ${version}`);
      continue;
    }
    const links = Array.isArray(build.links) ? build.links : [];
    const missing = links.filter((library) => !present.has(library));
    if (links.length === 0 || missing.length > 0) {
      refusals.push(`${name} links ${missing.join(", ") || "no library"}, which this process's llama.cpp did not load`);
      continue;
    }
    const file = path.join(folder, BATCH_SAMPLER_FILE);
    try {
      const addon = createRequire(import.meta.url)(file) as Partial<BatchSampler> & { builtFor?: unknown };
      if (typeof addon.sampleTokens === "function" && addon.builtFor === version) {
        return { sampler: addon as BatchSampler, file };
      }
      refusals.push(`${file} is not a batch sampler for node-llama-cpp ${version}`);
    } catch (error) {
      refusals.push(`${file} did not load (${(error as Error).message})`);
    }
  }
  const why = refusals.length > 0 ? refusals.join("; ") : "the batch sampler is not built";
  return { sampler: undefined, reason: `${why}: ${HOW_TO_BUILD}` };
}

/** The file names of the shared libraries mapped into this process (Linux; none elsewhere). */
export function loadedLibraries(): string[] {
  let maps: string;
  try {
    maps = readFileSync("/proc/self/maps", "utf8");
  } catch {
    return [];
  }
  const names = new Set<string>();
  for (const line of maps.split("\n")) {
    const slash = line.indexOf("/");
    if (slash >= 0) names.add(path.basename(line.slice(slash).trim()));
  }
  return [...names];
}

/** Below this vocabulary a sampling takes microseconds: less than starting a thread for it. */
export const PARALLEL_SAMPLING_MIN_VOCABULARY = 8192;

/**
 * How many threads one batch of `count` samplings over a vocabulary of `vocabulary` tokens may
 * use, on `cores` cores. A sampling passes over the whole vocabulary (about 1 ms for 49k tokens
 * on an H100's host, measured in turn), so a wide vocabulary's samplings are spread over up to
 * half the cores, at least two a thread, at most 8 threads. On 2 cores one thread: two gave the
 * same (113 against 110 tok/s at 16 sequences of the 135M shape, alternating rounds), and the
 * other core may be decoding another context meanwhile.
 */
export function samplingThreads(count: number, vocabulary: number, cores: number): number {
  if (vocabulary < PARALLEL_SAMPLING_MIN_VOCABULARY || cores < 4) return 1;
  return Math.max(1, Math.min(Math.floor(count / 2), Math.floor(cores / 2), 8));
}

/** The batch sampler for one model's contexts: its vocabulary and the process's cores decide each batch's threads. */
export function samplingBatches(sampler: BatchSampler, vocabulary: number, cores: number): SamplingBatches {
  return { sampler, threads: (count) => samplingThreads(count, vocabulary, cores) };
}
