import { InProcessModel } from "./in-process.js";
import { StepLoop } from "./step-loop.js";

/** node-llama-cpp generating on its own, in the bench's process: no API, Redis or events. */
export interface EngineAlone {
  /**
   * Its own sampling (a native call per sequence and token), or Hearth's batch sampler's (one a
   * step); or "step loop": no node-llama-cpp JavaScript between decodes (bench/src/step-loop.ts).
   */
  sampling: "one call each" | "batched" | "step loop";
  sequences: number;
  tokensPerS: number;
  cpuPer1000: number;
}

/**
 * The engine's part of the comparison: hearth-tiny in node-llama-cpp, in this process, with the
 * worker's threads, sequences and context, each of `rounds` rounds generating `tokens` greedy
 * tokens in 1 and in as many sequences as the context has, decoded together, each token
 * detokenized as the worker does; its CPU per token is all of this process's. Once with
 * node-llama-cpp's own sampling, once with the batch sampler where it is built (as workers run),
 * and once, with the batch sampler, through the bench's step loop instead of node-llama-cpp's
 * per-sequence evaluation: what that evaluation's JavaScript costs per token.
 */
export async function engineAlone(
  modelPath: string,
  prompt: string,
  tokens: number,
  rounds: number,
  worker: { threads: number; sequences: number; contextSize: number },
): Promise<EngineAlone[]> {
  const counts = [...new Set([1, worker.sequences])];
  /** Each count's `rounds` of `generate(count)` (which resolves to the tokens made), after a warm-up at the most. */
  const measure = async (sampling: EngineAlone["sampling"], generate: (count: number) => Promise<number>) => {
    await generate(worker.sequences);
    const measured: EngineAlone[] = [];
    for (const sequences of counts) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      let generated = 0;
      for (let r = 0; r < rounds; r++) generated += await generate(sequences);
      const wallMs = performance.now() - started;
      const used = process.cpuUsage(cpu);
      measured.push({
        sampling,
        sequences,
        tokensPerS: (generated / wallMs) * 1000,
        cpuPer1000: ((used.user + used.system) / 1000 / generated) * 1000,
      });
    }
    return measured;
  };
  const measured: EngineAlone[] = [];
  for (const batchSampling of [false, true]) {
    const model = await InProcessModel.load(modelPath, worker, batchSampling);
    try {
      if (batchSampling && model.sampling !== "batched") break;
      const together = async (count: number) =>
        (await model.generateTogether(prompt, tokens, count)).reduce((sum, t) => sum + t.tokens, 0);
      measured.push(...(await measure(model.sampling === "batched" ? "batched" : "one call each", together)));
    } finally {
      await model.dispose();
    }
  }
  const loop = await StepLoop.load(modelPath, worker);
  if (!loop) return measured;
  try {
    measured.push(...(await measure("step loop", (count) => loop.generateTogether(prompt, tokens, count))));
  } finally {
    await loop.dispose();
  }
  return measured;
}

export function engineName(e: EngineAlone): string {
  if (e.sampling === "step loop") return "a step loop on the native context, batch sampler";
  return e.sampling === "batched" ? "node-llama-cpp with the batch sampler" : "node-llama-cpp alone";
}
