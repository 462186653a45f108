import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { architectureOfComputeCapability, parseCudaArchitectures } from "../../src/config/cuda-architectures.js";

describe("CUDA architectures", () => {
  it("reads a list as CMake's CMAKE_CUDA_ARCHITECTURES takes it, whatever the separator", () => {
    expect(parseCudaArchitectures("80;86;89;90")).toEqual({ architectures: ["80", "86", "89", "90"] });
    expect(parseCudaArchitectures(" 80, 90 ")).toEqual({ architectures: ["80", "90"] });
    expect(parseCudaArchitectures("90a 120-real 75-virtual 90 90")).toEqual({
      architectures: ["90a", "120-real", "75-virtual", "90"],
    });
    expect(parseCudaArchitectures("native")).toEqual({ architectures: ["native"] });
  });

  it("refuses what is not an architecture, naming it", () => {
    expect(parseCudaArchitectures("9.0")).toEqual({ problem: expect.stringContaining("9.0: an architecture") });
    expect(parseCudaArchitectures("sm_90;80")).toEqual({ problem: expect.stringMatching(/^sm_90:/) });
    expect(parseCudaArchitectures(" ; ")).toEqual({ problem: expect.stringContaining("no architecture") });
  });

  it("turns nvidia-smi's compute capability into the architecture number", () => {
    expect(architectureOfComputeCapability("8.9")).toBe("89");
    expect(architectureOfComputeCapability("9.0")).toBe("90");
    expect(architectureOfComputeCapability("12.0")).toBe("120");
    expect(architectureOfComputeCapability(" 7.5\n")).toBe("75");
    expect(() => architectureOfComputeCapability("[N/A]")).toThrow(/not a compute capability/);
  });

  it("is HEARTH_CUDA_ARCHITECTURES in the config, unset by default; HEARTH_GPU_CHECK is on by default", () => {
    expect(loadConfig({}).worker.cudaArchitectures).toBeUndefined();
    expect(loadConfig({ HEARTH_CUDA_ARCHITECTURES: "80;90" }).worker.cudaArchitectures).toEqual(["80", "90"]);
    expect(() => loadConfig({ HEARTH_CUDA_ARCHITECTURES: "hopper" })).toThrow(/HEARTH_CUDA_ARCHITECTURES/);
    expect(loadConfig({}).worker.gpuCheck).toBe(true);
    expect(loadConfig({ HEARTH_GPU_CHECK: "false" }).worker.gpuCheck).toBe(false);
  });
});
