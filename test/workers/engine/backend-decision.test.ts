import { describe, expect, it } from "vitest";
import type { NvidiaGpus } from "../../../src/process/nvidia-gpus.js";
import {
  type BackendFacts,
  decideBackend,
  fixCommand,
  noCudaBackendMessage,
  shouldProbe,
  uncheckedWarning,
} from "../../../src/workers/engine/backend-decision.js";
import type { CudaProbe } from "../../../src/workers/engine/cuda-check.js";

const h200: NvidiaGpus = {
  present: true,
  gpus: [{ name: "NVIDIA H200", computeCapability: "9.0", driverVersion: "580.95.05" }],
};
const noGpu: NvidiaGpus = { present: false, gpus: [], smiError: "nvidia-smi not found" };
/** What the H200 with a CUDA 13.0 driver does with node-llama-cpp 3.21.1's prebuilt backend (PTX of CUDA 13.1). */
const ptxTooNew: CudaProbe = {
  ok: false,
  stage: "run",
  build: "prebuilt",
  reason: "CUDA error: the provided PTX was compiled with an unsupported toolchain. (the probe was killed by SIGABRT)",
  output: "",
};
const librariesMissing: CudaProbe = {
  ok: false,
  stage: "load",
  reason:
    'The prebuilt binary for platform "linux" "x64" with CUDA support is not compatible with the current system (the probe exited with code 3)',
  output: "",
};
const runs: CudaProbe = { ok: true, devices: ["NVIDIA H200"], build: "localBuild" };
const localBuild = { folder: "linux-x64-cuda-4u6u3j11", architectures: "90" };

const facts = (f: Partial<BackendFacts> & Pick<BackendFacts, "choice">): BackendFacts => ({
  nvidia: h200,
  probe: undefined,
  ...f,
});

describe("the backend a worker loads", () => {
  it("probes where CUDA is named or a candidate; never with the check off", () => {
    expect(shouldProbe("cuda", false, true)).toBe(true);
    expect(shouldProbe("auto", true, true)).toBe(true);
    // A machine without an NVIDIA GPU or CUDA's libraries: no child process.
    expect(shouldProbe("auto", false, true)).toBe(false);
    expect(shouldProbe("cuda", true, false)).toBe(false);
  });

  it("auto: CUDA whose kernels fail: the CPU, with a warning naming the error, the GPU and the fix", () => {
    const decision = decideBackend(facts({ choice: "auto", probe: ptxTooNew }));
    expect(decision.load).toBe("cpu");
    const warning = (decision as { warning: string }).warning;
    expect(warning).toContain("CUDA error: the provided PTX was compiled with an unsupported toolchain.");
    expect(warning).toContain("killed by SIGABRT");
    expect(warning).toContain("NVIDIA H200 (compute capability 9.0, driver 580.95.05)");
    expect(warning).toContain("node-llama-cpp's prebuilt CUDA backend loaded and could not run a model on the GPU");
    expect(warning).toContain("`npm run build:cuda`");
    expect(warning).toContain('--build-arg CUDA_ARCHITECTURES="90"');
    expect(warning).toMatch(/Running on the CPU instead\.$/);
  });

  it("cuda: the same failure stops the worker with the same words", () => {
    const decision = decideBackend(facts({ choice: "cuda", probe: ptxTooNew }));
    expect(decision.load).toBe("stop");
    const message = (decision as { message: string }).message;
    expect(message).toMatch(/^HEARTH_GPU=cuda, but /);
    expect(message).toContain("unsupported toolchain");
    expect(message).toContain("`npm run build:cuda`");
    expect(message).toContain("The worker stops");
  });

  it("auto: an NVIDIA GPU that node-llama-cpp could not use: its words, the libraries to check, the fix", () => {
    const decision = decideBackend(facts({ choice: "auto", probe: librariesMissing }));
    expect(decision.load).toBe("cpu");
    const warning = (decision as { warning: string }).warning;
    expect(warning).toMatch(/^HEARTH_GPU=auto: this machine has an NVIDIA GPU, but node-llama-cpp could not load/);
    expect(warning).toContain("with CUDA support is not compatible with the current system");
    expect(warning).toContain("LD_LIBRARY_PATH");
  });

  it("loads CUDA that runs, and says which build", () => {
    expect(decideBackend(facts({ choice: "auto", probe: runs, build: localBuild }))).toEqual({
      load: "cuda",
      info: "CUDA runs on NVIDIA H200 with the local CUDA build linux-x64-cuda-4u6u3j11 for architectures 90",
    });
    expect(decideBackend(facts({ choice: "cuda", probe: runs })).load).toBe("cuda");
    // The local build asked for, and the prebuilt one loaded: said.
    const prebuilt = decideBackend(facts({ choice: "auto", probe: { ...runs, build: "prebuilt" }, build: localBuild }));
    expect((prebuilt as { info: string }).info).toContain(
      "prebuilt CUDA backend (the local build linux-x64-cuda-4u6u3j11 was not the one loaded)",
    );
  });

  it("unprobed: auto lets node-llama-cpp choose, cuda loads CUDA or stops, an unused NVIDIA GPU is told", () => {
    expect(decideBackend(facts({ choice: "auto", nvidia: noGpu }))).toEqual({ load: "auto" });
    expect(decideBackend(facts({ choice: "cuda" }))).toEqual({ load: "cuda" });
    expect(uncheckedWarning(noGpu, false)).toBeUndefined();
    expect(uncheckedWarning(h200, "cuda")).toBeUndefined();
    expect(uncheckedWarning(h200, false)).toContain("node-llama-cpp chose the CPU; with HEARTH_GPU_CHECK=false");
    expect(noCudaBackendMessage(noGpu, "NoBinaryFoundError")).toContain(
      "no usable cuda backend on this machine (NoBinaryFoundError). GPU: no NVIDIA GPU found.",
    );
  });

  it("names the architectures of the GPUs in the fix, or asks for one", () => {
    const two: NvidiaGpus = {
      present: true,
      gpus: [
        { name: "A100", computeCapability: "8.0", driverVersion: "1" },
        { name: "H100", computeCapability: "9.0", driverVersion: "1" },
        { name: "H100", computeCapability: "9.0", driverVersion: "1" },
      ],
    };
    expect(fixCommand(two)).toContain('CUDA_ARCHITECTURES="80;90"');
    expect(fixCommand(noGpu)).toContain("npm run build:cuda -- --arch <architecture");
  });
});
