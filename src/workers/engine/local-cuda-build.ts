import { access, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

/**
 * The CUDA backend `npm run build:cuda` compiled, as node-llama-cpp recorded it: the folder
 * its `source build` wrote last (`llama/lastBuild.json`) and that build's options
 * (`localBuilds/<folder>/Release/_nlcBuildMetadata.json`).
 *
 * node-llama-cpp names a local build's folder by a hash of its custom CMake options
 * (CMAKE_CUDA_ARCHITECTURES among them) and, at run time, looks for the folder its own options
 * hash to: a process started without the build's options would not find it. So the engine
 * passes these recorded options back to getLlama as `cmakeOptions`, and the worker finds the
 * build whatever its environment.
 */
export interface LocalCudaBuild {
  /** `linux-x64-cuda-<hash of the options>`. */
  folder: string;
  /** The folder's absolute path. */
  dir: string;
  /** The custom CMake options it was built with; getLlama hashes them back to `folder`. */
  cmakeOptions: Record<string, string>;
  /** CMAKE_CUDA_ARCHITECTURES of the build (`80;90`), when it was given. */
  architectures: string | undefined;
}

/** node-llama-cpp's `llama` directory, where its local builds and their records live. */
export function nodeLlamaCppLlamaDir(): string {
  const entry = createRequire(import.meta.url).resolve("node-llama-cpp");
  return path.resolve(path.dirname(entry), "..", "llama");
}

/** The last local build, when it is a complete CUDA one; undefined otherwise. */
export async function lastCudaBuild(llamaDir = nodeLlamaCppLlamaDir()): Promise<LocalCudaBuild | undefined> {
  const last = await readJson(path.join(llamaDir, "lastBuild.json"));
  const folder = (last as { folderName?: unknown } | undefined)?.folderName;
  if (typeof folder !== "string" || folder === "" || folder.includes("/") || folder.includes("..")) return undefined;
  const dir = path.join(llamaDir, "localBuilds", folder);
  const metadata = await readJson(path.join(dir, "Release", "_nlcBuildMetadata.json"));
  const options = (metadata as { buildOptions?: { gpu?: unknown; customCmakeOptions?: unknown } } | undefined)
    ?.buildOptions;
  if (options?.gpu !== "cuda") return undefined;
  // What node-llama-cpp itself requires of a local build before it loads it.
  const complete = await Promise.all(
    [path.join(dir, "buildDone.status"), path.join(dir, "Release", "llama-addon.node")].map((file) =>
      access(file).then(
        () => true,
        () => false,
      ),
    ),
  );
  if (!complete.every(Boolean)) return undefined;
  const cmakeOptions: Record<string, string> = {};
  const recorded = options.customCmakeOptions;
  if (recorded !== null && typeof recorded === "object") {
    for (const [key, value] of Object.entries(recorded)) if (typeof value === "string") cmakeOptions[key] = value;
  }
  return { folder, dir, cmakeOptions, architectures: cmakeOptions.CMAKE_CUDA_ARCHITECTURES };
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as unknown;
  } catch {
    return undefined;
  }
}
