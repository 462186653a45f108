import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastCudaBuild, nodeLlamaCppLlamaDir } from "../../../src/workers/engine/local-cuda-build.js";

/**
 * A real build's record: `npm run build:cuda -- --arch 90 --portable` gives these custom
 * options, and node-llama-cpp 3.21.1 named its folder so (a build compiled on this kind of machine).
 */
const BUILT_OPTIONS = {
  CMAKE_CUDA_ARCHITECTURES: "90",
  GGML_AVX2: "ON",
  GGML_BMI2: "ON",
  GGML_F16C: "ON",
  GGML_FMA: "ON",
  GGML_NATIVE: "OFF",
};
const BUILT_FOLDER = "linux-x64-cuda-4u6u3j114e1u3a263c6e3485s2h6z29385p6w1y";

/** node-llama-cpp's internals (not exported, so imported by path): its names and its naming. */
const dist = path.join(nodeLlamaCppLlamaDir(), "..", "dist");
const internal = (file: string) => import(pathToFileURL(path.join(dist, file)).href);

async function folderNodeLlamaCppLooksFor(cmakeOptions: Record<string, string>): Promise<string> {
  const naming = await internal("bindings/utils/getBuildFolderNameForBuildOptions.js");
  const releases = await internal("bindings/utils/binariesGithubRelease.js");
  const name = await naming.getBuildFolderNameForBuildOptions({
    platform: "linux",
    arch: "x64",
    gpu: "cuda",
    customCmakeOptions: new Map(Object.entries(cmakeOptions)),
    llamaCpp: { repo: "ggml-org/llama.cpp", release: releases.builtinLlamaCppRelease },
  });
  return name.withCustomCmakeOptions as string;
}

describe("the last local CUDA build", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "hearth-local-build-"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  /** A llama directory laid out as node-llama-cpp's `source build` leaves it, by its own file names. */
  async function llamaDir(options: { gpu: string | false; done?: boolean; addon?: boolean }): Promise<string> {
    const names = await internal("config.js");
    const dir = await mkdtemp(path.join(root, "llama-"));
    const build = path.join(dir, path.basename(names.llamaLocalBuildBinsDirectory), BUILT_FOLDER);
    const release = path.join(build, "Release");
    await mkdir(release, { recursive: true });
    const lastBuild = path.join(dir, path.basename(names.lastBuildInfoJsonPath));
    await writeFile(lastBuild, JSON.stringify({ folderName: BUILT_FOLDER }, null, 4));
    const buildOptions = {
      customCmakeOptions: BUILT_OPTIONS,
      progressLogs: true,
      platform: "linux",
      platformInfo: { name: "Debian GNU/Linux", version: "12" },
      arch: "x64",
      gpu: options.gpu,
      llamaCpp: { repo: "ggml-org/llama.cpp", release: "v0.4.0" },
    };
    await writeFile(path.join(release, names.buildMetadataFileName), JSON.stringify({ buildOptions }));
    if (options.addon ?? true) await writeFile(path.join(release, "llama-addon.node"), "");
    if (options.done ?? true) await writeFile(path.join(build, "buildDone.status"), "");
    return dir;
  }

  it("gives the options the build was made with, which node-llama-cpp hashes back to the build's folder", async () => {
    const dir = await llamaDir({ gpu: "cuda" });
    const build = await lastCudaBuild(dir);
    expect(build).toEqual({
      folder: BUILT_FOLDER,
      dir: path.join(dir, "localBuilds", BUILT_FOLDER),
      cmakeOptions: BUILT_OPTIONS,
      architectures: "90",
    });
    // What makes a worker find the build: getLlama, given these as cmakeOptions, looks in that folder.
    expect(await folderNodeLlamaCppLooksFor(build!.cmakeOptions)).toBe(BUILT_FOLDER);
    // Without them (a worker started without the build's environment), it would look elsewhere.
    expect(await folderNodeLlamaCppLooksFor({})).toBe("linux-x64-cuda");
  });

  it("is none when the last build is not CUDA, is unfinished, or was never made", async () => {
    expect(await lastCudaBuild(await llamaDir({ gpu: "vulkan" }))).toBeUndefined();
    expect(await lastCudaBuild(await llamaDir({ gpu: false }))).toBeUndefined();
    expect(await lastCudaBuild(await llamaDir({ gpu: "cuda", done: false }))).toBeUndefined();
    expect(await lastCudaBuild(await llamaDir({ gpu: "cuda", addon: false }))).toBeUndefined();
    expect(await lastCudaBuild(await mkdtemp(path.join(root, "empty-")))).toBeUndefined();
  });

  it("finds node-llama-cpp's own llama directory", () => {
    expect(path.basename(nodeLlamaCppLlamaDir())).toBe("llama");
    expect(nodeLlamaCppLlamaDir()).toContain(`${path.sep}node-llama-cpp${path.sep}`);
  });
});
