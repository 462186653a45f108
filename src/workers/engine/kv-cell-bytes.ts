import type { LlamaModel } from "node-llama-cpp";

/**
 * The bytes of KV cache one token's cell takes in a context of `model` (all layers, keys and
 * values, at the cache's element types): what a cached prompt token holds. Read off
 * node-llama-cpp's estimate of a context's memory as the difference between two sizes, so that
 * whatever it knows of the model's shape (grouped-query heads, per-layer head counts, key and
 * value lengths) counts, and the fixed costs cancel.
 */
export function kvCellBytes(model: LlamaModel): number {
  const memory = (contextSize: number) =>
    model.fileInsights.estimateContextResourceRequirements({
      contextSize,
      modelGpuLayers: model.gpuLayers,
      sequences: 1,
      includeGraphOverhead: false,
    });
  const [small, large] = [memory(SMALL), memory(2 * SMALL)];
  const bytes = large.cpuRam + large.gpuVram - (small.cpuRam + small.gpuVram);
  return Math.max(0, Math.round(bytes / SMALL));
}

const SMALL = 1024;
