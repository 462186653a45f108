import { describe, expect, it } from "vitest";
import {
  PROBE_FAILED,
  PROBE_LOADED,
  PROBE_PASSED,
  probeCuda,
  readProbe,
} from "../../../src/workers/engine/cuda-check.js";

/** ggml's report of a kernel that cannot run, then its abort (GGML_NO_BACKTRACE set). */
const kernelFailure = [
  `${PROBE_LOADED} {"build":"prebuilt"}`,
  "CUDA error: the provided PTX was compiled with an unsupported toolchain.",
  "  current device: 0, in function ggml_cuda_compute_forward at ggml/src/ggml-cuda/ggml-cuda.cu:2592",
  "  err",
  "ggml/src/ggml-cuda/ggml-cuda.cu:88: CUDA error",
].join("\n");

describe("the CUDA probe", () => {
  it("reads a kernel's failure: CUDA's error line, how the probe died, the build that loaded", () => {
    expect(readProbe(kernelFailure, { code: null, signal: "SIGABRT" })).toEqual({
      ok: false,
      stage: "run",
      build: "prebuilt",
      reason:
        "CUDA error: the provided PTX was compiled with an unsupported toolchain. (the probe was killed by SIGABRT)",
      output: kernelFailure,
    });
  });

  it("reads a backend that did not load: node-llama-cpp's words and the probe's", () => {
    const output = [
      '[node-llama-cpp] The prebuilt binary for platform "linux" "x64" with CUDA support is not compatible with the current system',
      `${PROBE_FAILED} node-llama-cpp loaded no CUDA backend (NoBinaryFoundError)`,
    ].join("\n");
    const probe = readProbe(output, { code: 3, signal: null });
    expect(probe).toMatchObject({ ok: false, stage: "load" });
    expect((probe as { reason: string }).reason).toBe(
      'The prebuilt binary for platform "linux" "x64" with CUDA support is not compatible with the current system; ' +
        "node-llama-cpp loaded no CUDA backend (NoBinaryFoundError) (the probe exited with code 3)",
    );
  });

  it("reads a probe that hung, and one that passed", () => {
    const hung = readProbe(`${PROBE_LOADED} {"build":"localBuild"}\n`, {
      code: null,
      signal: "SIGKILL",
      timedOutMs: 180_000,
    });
    expect(hung).toMatchObject({ ok: false, stage: "run", build: "localBuild" });
    expect((hung as { reason: string }).reason).toMatch(/\(the probe did not finish in 180 s\)$/);
    const passed = `${PROBE_LOADED} {"build":"localBuild"}\n${PROBE_PASSED} {"devices":["NVIDIA H200"],"build":"localBuild"}\n`;
    expect(readProbe(passed, { code: 0, signal: null })).toEqual({
      ok: true,
      devices: ["NVIDIA H200"],
      build: "localBuild",
    });
    // Passed, then died on the way out: not a pass.
    expect(readProbe(passed, { code: null, signal: "SIGSEGV" }).ok).toBe(false);
  });

  it("asked for CUDA with no GPU visible, reports the failure and its reason; this process goes on", async () => {
    // No GPU for the probe on any machine: on this one there is none, and CUDA sees none where there is.
    const visible = process.env.CUDA_VISIBLE_DEVICES;
    process.env.CUDA_VISIBLE_DEVICES = "-1";
    try {
      const probe = await probeCuda();
      expect(probe.ok).toBe(false);
      const { reason, output } = probe as Extract<typeof probe, { ok: false }>;
      expect(reason).toMatch(/CUDA|GPU/);
      expect(reason).toMatch(/\(the probe exited with code 3\)$/);
      expect(output).toContain(PROBE_FAILED);
    } finally {
      if (visible === undefined) delete process.env.CUDA_VISIBLE_DEVICES;
      else process.env.CUDA_VISIBLE_DEVICES = visible;
    }
  });
});
