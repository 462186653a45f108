import { InProcessModel } from "./in-process.js";
import { StepLoop } from "./step-loop.js";

/** node-llama-cpp generating on its own, in the bench's process: no API, Redis or events. */
export interface EngineAlone {
  /**
   * node-llama-cpp's `evaluate` with its own sampling (a native call per sequence and token), or
   * with Hearth's batch sampler's (one a step); "driver": the worker's generation loop on
   * node-llama-cpp's batches (sequence-driver.ts) with the batch sampler, as workers generate;
   * "step loop": no node-llama-cpp JavaScript between decodes (bench/src/step-loop.ts).
   */
  sampling: "one call each" | "batched" | "driver" | "step loop";
  sequences: number;
  tokensPerS: number;
  cpuPer1000: number;
}

/**
 * The engine's part of the comparison: hearth-tiny in node-llama-cpp, in this process, with the
 * worker's threads, sequences and context, each of `rounds` rounds generating `tokens` greedy
 * tokens in 1 and in as many sequences as the context has, decoded together, each token
 * detokenized as the worker does; its CPU per token is all of this process's. Through
 * node-llama-cpp's `evaluate` with its own sampling, then with the batch sampler where it is
 * built; through the worker's driver (as workers run); and through the bench's step loop: what
 * the JavaScript between two decodes costs per token, node-llama-cpp's and the driver's.
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
  const variants = [
    { batchSampling: false, generation: "evaluate" },
    { batchSampling: true, generation: "evaluate" },
    { batchSampling: true, generation: "driver" },
  ] as const;
  for (const { batchSampling, generation } of variants) {
    const model = await InProcessModel.load(modelPath, worker, batchSampling, generation);
    try {
      if (batchSampling && model.sampling !== "batched") break;
      const together = async (count: number) =>
        (await model.generateTogether(Array(count).fill(prompt), tokens)).reduce((sum, t) => sum + t.tokens, 0);
      const sampling = generation === "driver" ? "driver" : batchSampling ? "batched" : "one call each";
      measured.push(...(await measure(sampling, together)));
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
  if (e.sampling === "driver") return "the worker's driver on node-llama-cpp's batches, batch sampler";
  return e.sampling === "batched" ? "node-llama-cpp with the batch sampler" : "node-llama-cpp alone";
}
