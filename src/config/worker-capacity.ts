import { z } from "zod";
import { GPU_CHOICES } from "../domain/gpu.js";
import { parseCudaArchitectures } from "./cuda-architectures.js";
import { bool, int, optionalInt, optionalString, parsedBy } from "./schemas.js";
import type { VariableSpec } from "./spec.js";

/**
 * What one worker runs at once, per base model: its contexts and their sequences (each
 * reserves HEARTH_CONTEXT_SIZE tokens of KV cache), the jobs it takes, its threads and GPU.
 * config.ts derives HEARTH_WORKER_CONCURRENCY when unset and refuses contradictory settings
 * (config/contradictions.ts).
 */
export const workerCapacity = {
  HEARTH_CONTEXTS_PER_MODEL: {
    schema: int(1, 16),
    default: "1",
    description: "llama.cpp contexts per loaded base model; requests go to the least busy one.",
  },
  HEARTH_SEQUENCES_PER_CONTEXT: {
    schema: int(1, 64),
    default: "4",
    description: "Requests one base-model context evaluates together in a batch.",
  },
  HEARTH_ADAPTER_CONTEXTS: {
    schema: int(1, 16),
    default: "8",
    description:
      "Contexts the LoRA adapters of a loaded model share, made on the first adapter's request (8: one per warm adapter).",
  },
  HEARTH_ADAPTER_SEQUENCES: {
    schema: int(1, 64),
    default: "2",
    description: "Sequences of each adapter context (each batch holds one adapter's requests).",
  },
  HEARTH_EXPRESS_SEQUENCES: {
    schema: int(0, 16),
    default: "1",
    description:
      "Sequences of each base model's express context, for accounts with nothing else in flight. 0: no express lane.",
  },
  HEARTH_WORKER_CONCURRENCY: {
    schema: optionalInt(1, 64),
    description: "Jobs a worker takes at once from each queue of a model. Unset: enough to fill the sequences above.",
  },
  HEARTH_CONTEXT_SIZE: {
    schema: int(64, 1_048_576),
    default: "2048",
    description: "Tokens of context per sequence, capped at the model's own context length.",
  },
  HEARTH_PROMPT_CACHE_TOKENS: {
    schema: optionalInt(0, 1_073_741_824),
    description:
      "KV cells a context's idle sequences keep for prompts that start alike. Unset: all they hold; 0: no prompt caching.",
  },
  HEARTH_WORKER_THREADS: {
    schema: int(0, 256),
    default: "0",
    description: "CPU threads per context; 0: one fewer than the cores this process may use (at least 1).",
  },
  HEARTH_WORKER_MAX_ADAPTERS: {
    schema: int(1, 1024),
    default: "8",
    description: "LoRA adapters a worker keeps loaded per base model; the least recently used is freed first.",
  },
  HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL: {
    schema: int(1, 100_000),
    default: "64",
    description: "Adapter loads after which a worker re-creates its base model object (bounds native memory).",
  },
  HEARTH_GPU: {
    schema: z.enum(GPU_CHOICES, { message: `one of ${GPU_CHOICES.join(", ")}` }),
    default: "auto",
    description: "The llama.cpp backend workers load: auto, cuda, vulkan, metal, or off (the CPU).",
  },
  HEARTH_GPU_LAYERS: {
    schema: z.union([z.enum(["auto", "max"]), z.coerce.number().int().min(0).max(10_000)], {
      message: "auto, max, or a number of layers",
    }),
    default: "auto",
    description: "Layers of each model put on the GPU: auto (as many as fit its memory), max (all), or a number.",
  },
  HEARTH_GPU_CHECK: {
    schema: bool,
    default: "true",
    description:
      "Before a worker uses CUDA, a child process runs a tiny model on the GPU; if it fails, auto falls back, cuda stops.",
  },
  HEARTH_NATIVE_SAMPLER: {
    schema: bool,
    default: "true",
    description:
      "Sample all sequences of a step in one native call (the batch sampler npm ci builds); false: one call each.",
  },
  HEARTH_CUDA_ARCHITECTURES: {
    schema: optionalString.pipe(parsedBy(parseCudaArchitectures).optional()),
    description:
      "GPU architectures `npm run build:cuda` compiles for, e.g. 80;90. Unset: those of this machine's GPUs.",
  },
} satisfies Record<string, VariableSpec>;

/**
 * HEARTH_WORKER_CONCURRENCY when unset: jobs enough to fill the base model's sequences from
 * its shared queue, and the adapters' from the shared queue and the worker's own (where
 * placement sends the adapters it has loaded), each taken at this concurrency.
 */
export function derivedConcurrency(s: {
  contextsPerModel: number;
  sequencesPerContext: number;
  adapterContexts: number;
  adapterSequences: number;
}): number {
  return Math.max(s.contextsPerModel * s.sequencesPerContext, Math.ceil((s.adapterContexts * s.adapterSequences) / 2));
}
