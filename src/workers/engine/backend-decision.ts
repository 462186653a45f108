import { architectureOfComputeCapability } from "../../config/cuda-architectures.js";
import { describeGpus, type NvidiaGpus } from "../../process/nvidia-gpus.js";
import type { CudaProbe } from "./cuda-check.js";
import type { LocalCudaBuild } from "./local-cuda-build.js";

/**
 * Which llama.cpp backend a worker loads when HEARTH_GPU is auto or cuda, decided before it
 * loads any (one process, one backend library), from the machine's NVIDIA GPUs and what the
 * CUDA probe saw (cuda-check.ts). HEARTH_GPU=cuda runs on CUDA that works or stops; auto never
 * leaves an NVIDIA GPU unused without a warning that says why and what to run.
 */

/** A backend getLlama loaded (Llama.gpu). */
export type LoadedGpu = "cuda" | "vulkan" | "metal" | false;

export interface BackendFacts {
  choice: "auto" | "cuda";
  nvidia: NvidiaGpus;
  /** The probe's outcome; undefined when it did not run. */
  probe: CudaProbe | undefined;
  /** The local CUDA build (npm run build:cuda) the worker asks node-llama-cpp for, if there is one. */
  build?: Pick<LocalCudaBuild, "folder" | "architectures">;
}

export type BackendDecision =
  /** Load CUDA: it ran in the probe, or cuda is named and unchecked. */
  | { load: "cuda"; info?: string }
  /** Let node-llama-cpp choose: no CUDA here to check, or the check is off. */
  | { load: "auto" }
  /** auto: CUDA does not run here; the CPU, with the reason. */
  | { load: "cpu"; warning: string }
  /** cuda: the worker does not start. */
  | { load: "stop"; message: string };

/**
 * Whether to run the probe: CUDA named, or a candidate (an NVIDIA GPU here, or CUDA libraries
 * node-llama-cpp would pick); never with the check off, nor on a machine with neither.
 */
export function shouldProbe(choice: "auto" | "cuda", cudaCandidate: boolean, checkEnabled: boolean): boolean {
  return checkEnabled && (choice === "cuda" || cudaCandidate);
}

export function decideBackend(facts: BackendFacts): BackendDecision {
  const { choice, probe } = facts;
  if (probe === undefined) return choice === "cuda" ? { load: "cuda" } : { load: "auto" };
  if (probe.ok) {
    return {
      load: "cuda",
      info: `CUDA runs on ${probe.devices.join(", ") || describeGpus(facts.nvidia)} with ${buildName(probe.build, facts)}`,
    };
  }
  const problem = cudaProblem(facts, probe);
  if (choice === "cuda") {
    return {
      load: "stop",
      message: `HEARTH_GPU=cuda, but ${problem} The worker stops (HEARTH_GPU=auto would run on the CPU).`,
    };
  }
  const here = facts.nvidia.present ? "this machine has an NVIDIA GPU, but " : "";
  return { load: "cpu", warning: `HEARTH_GPU=auto: ${here}${problem} Running on the CPU instead.` };
}

/** With the check off: an NVIDIA GPU that node-llama-cpp's choice leaves unused is still told. */
export function uncheckedWarning(nvidia: NvidiaGpus, loaded: LoadedGpu): string | undefined {
  if (!nvidia.present || loaded === "cuda") return undefined;
  return `HEARTH_GPU=auto: this machine has ${describeGpus(nvidia)}, but node-llama-cpp chose ${backendName(loaded)}; with HEARTH_GPU_CHECK=false the reason was not sought (start a worker with HEARTH_GPU=cuda to see it).`;
}

/** HEARTH_GPU=cuda and this process could not load the CUDA backend. */
export function noCudaBackendMessage(nvidia: NvidiaGpus, loadError: string): string {
  return `HEARTH_GPU=cuda: llama.cpp has no usable cuda backend on this machine (${loadError}). GPU: ${describeGpus(nvidia)}. Set HEARTH_GPU to auto or off, or: ${fixCommand(nvidia)}`;
}

/** The fix for this machine: build the backend for its GPUs, or an image for them. */
export function fixCommand(nvidia: NvidiaGpus): string {
  const architectures = [...new Set(nvidia.gpus.map((gpu) => architectureOfComputeCapability(gpu.computeCapability)))];
  const listed = architectures.join(";");
  const build =
    architectures.length > 0 ? "`npm run build:cuda`" : "`npm run build:cuda -- --arch <architecture, e.g. 90>`";
  const image = `\`docker build -f Dockerfile.cuda --build-arg CUDA_ARCHITECTURES="${listed || "<architecture>"}" .\``;
  return `To build llama.cpp's CUDA backend for ${listed ? `architecture ${listed}` : "this GPU"}: ${build} (needs the CUDA toolkit's nvcc), or for an image ${image} (docs/deploy.md, "GPUs").`;
}

function cudaProblem(facts: BackendFacts, probe: Extract<CudaProbe, { ok: false }>): string {
  const gpus = `GPU: ${describeGpus(facts.nvidia)}.`;
  if (probe.stage === "run") {
    return `${buildName(probe.build, facts)} loaded and could not run a model on the GPU: ${probe.reason}. ${gpus} ${fixCommand(facts.nvidia)}`;
  }
  return `node-llama-cpp could not load a CUDA backend: ${probe.reason}. ${gpus} Check that the NVIDIA driver's libcuda and the CUDA runtime's libcudart, libcublas and libcublasLt (12 or 13) are on the library path (LD_LIBRARY_PATH). ${fixCommand(facts.nvidia)}`;
}

function buildName(build: string | undefined, facts: BackendFacts): string {
  if (build === "localBuild" && facts.build) {
    const architectures = facts.build.architectures ? ` for architectures ${facts.build.architectures}` : "";
    return `the local CUDA build ${facts.build.folder}${architectures}`;
  }
  if (build === "localBuild") return "a local CUDA build";
  const unused = facts.build ? ` (the local build ${facts.build.folder} was not the one loaded)` : "";
  return `node-llama-cpp's prebuilt CUDA backend${unused}`;
}

function backendName(loaded: LoadedGpu): string {
  return loaded === false ? "the CPU" : loaded;
}
