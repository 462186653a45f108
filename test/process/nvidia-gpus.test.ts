import { describe, expect, it } from "vitest";
import { describeGpus, parseNvidiaSmiGpus } from "../../src/process/nvidia-gpus.js";

describe("nvidia-smi's GPUs", () => {
  it("reads one GPU a line: name, compute capability, driver", () => {
    const csv = "NVIDIA H200, 9.0, 580.95.05\nNVIDIA GeForce RTX 4090, 8.9, 580.95.05\n";
    expect(parseNvidiaSmiGpus(csv)).toEqual([
      { name: "NVIDIA H200", computeCapability: "9.0", driverVersion: "580.95.05" },
      { name: "NVIDIA GeForce RTX 4090", computeCapability: "8.9", driverVersion: "580.95.05" },
    ]);
  });

  it("keeps a comma in a name, and skips lines that are not GPUs", () => {
    const csv = "Tesla, Inc. X1, 12.0, 590.1\nNo devices were found\nGPU 0, [N/A], 470.1\n";
    expect(parseNvidiaSmiGpus(csv)).toEqual([
      { name: "Tesla, Inc. X1", computeCapability: "12.0", driverVersion: "590.1" },
    ]);
  });

  it("describes them in a line, or says why there are none", () => {
    const h200 = { name: "NVIDIA H200", computeCapability: "9.0", driverVersion: "580.95.05" };
    expect(describeGpus({ present: true, gpus: [h200] })).toBe(
      "NVIDIA H200 (compute capability 9.0, driver 580.95.05)",
    );
    expect(describeGpus({ present: false, gpus: [], smiError: "nvidia-smi not found" })).toBe("no NVIDIA GPU found");
    expect(describeGpus({ present: true, gpus: [], smiError: "nvidia-smi not found" })).toContain(
      "nvidia-smi did not describe (nvidia-smi not found)",
    );
  });
});
