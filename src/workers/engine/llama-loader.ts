import { getLlama, getLlamaGpuTypes, type Llama, type LlamaOptions } from "node-llama-cpp";
import type { GpuChoice } from "../../domain/gpu.js";
import type { Logger } from "../../logger.js";
import { findNvidiaGpus } from "../../process/nvidia-gpus.js";
import { decideBackend, noCudaBackendMessage, shouldProbe, uncheckedWarning } from "./backend-decision.js";
import { probeCuda } from "./cuda-check.js";
import { lastCudaBuild } from "./local-cuda-build.js";

export type LoaderOptions = Omit<LlamaOptions, "gpu" | "cmakeOptions">;

/**
 * llama.cpp with the backend HEARTH_GPU asks for. A backend named and not usable here stops
 * the worker at start with a message that says so, rather than running on the CPU unseen.
 *
 * With auto or cuda, the local CUDA build of `npm run build:cuda` is the one asked for, and
 * wherever CUDA is named or a candidate, a child process first runs a model on the GPU with it
 * (HEARTH_GPU_CHECK): auto then loads CUDA, or the CPU with a warning naming the reason and the
 * fix; cuda loads CUDA or stops (backend-decision.ts). The decision comes before this process
 * loads any backend: it loads one, never a second over a first.
 */
export async function loadLlama(
  gpu: GpuChoice,
  options: LoaderOptions,
  check: { log: Logger; enabled: boolean },
): Promise<Llama> {
  const llama = await pickLlama(gpu, options, check);
  check.log.info("llama.cpp backend", { backend: llama.gpu || "cpu", build: llama.buildType, HEARTH_GPU: gpu });
  return llama;
}

async function pickLlama(
  gpu: GpuChoice,
  options: LoaderOptions,
  check: { log: Logger; enabled: boolean },
): Promise<Llama> {
  if (gpu === "off") return getLlama({ ...options, gpu: false });
  if (gpu === "vulkan" || gpu === "metal") return loadNamed(gpu, options);
  const { log } = check;
  const build = await lastCudaBuild();
  const withBuild: LlamaOptions = { ...options, ...(build ? { cmakeOptions: build.cmakeOptions } : {}) };
  const nvidia = await findNvidiaGpus();
  // A candidate: an NVIDIA GPU here, or the CUDA libraries by which node-llama-cpp's auto picks CUDA.
  const candidate = nvidia.present || (await getLlamaGpuTypes("supported")).includes("cuda");
  const probe = shouldProbe(gpu, candidate, check.enabled)
    ? await probeCuda(build ? { cmakeOptions: build.cmakeOptions } : {})
    : undefined;
  const decision = decideBackend({ choice: gpu, nvidia, probe, build });
  switch (decision.load) {
    case "stop":
      throw new Error(decision.message);
    case "cpu":
      log.warn(decision.warning);
      return getLlama({ ...options, gpu: false });
    case "auto": {
      const llama = await getLlama({ ...withBuild, gpu: "auto" });
      const warning = uncheckedWarning(nvidia, llama.gpu);
      if (warning) log.warn(warning);
      return llama;
    }
    case "cuda":
      try {
        const llama = await getLlama({ ...withBuild, gpu: "cuda" });
        if (decision.info) log.info(decision.info);
        return llama;
      } catch (cause) {
        const message = noCudaBackendMessage(nvidia, (cause as Error).message);
        if (gpu === "cuda") throw new Error(message, { cause });
        log.warn(`HEARTH_GPU=auto: CUDA ran in the check, but not in this process: ${message} Running on the CPU.`);
        return getLlama({ ...options, gpu: false });
      }
  }
}

async function loadNamed(gpu: "vulkan" | "metal", options: LoaderOptions): Promise<Llama> {
  try {
    return await getLlama({ ...options, gpu });
  } catch (cause) {
    throw new Error(
      `HEARTH_GPU=${gpu}: llama.cpp has no usable ${gpu} backend on this machine (${(cause as Error).message}); set HEARTH_GPU to auto or off.`,
      { cause },
    );
  }
}
