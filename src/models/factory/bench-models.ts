import { readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { folderState, pathExists, writeFileAtomically, writeFolderAtomically } from "../formats/atomic-output.js";
import { readGgufHeader } from "../formats/gguf-reader.js";
import { PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE, writePeftAdapter } from "./peft-adapter.js";
import { randomLlamaPlan, writeRandomLlama, type RandomLlamaShape, type RandomLlamaPlan } from "./random-llama.js";
import { randomQvLoraModules } from "./random-lora.js";

/**
 * Benchmark models: random weights in the shapes of real models, and PEFT LoRA adapters
 * for them that go through Hearth's real upload, validation and conversion path.
 *
 *   <dir>/<id>.gguf                                   the base model (Q8_0)
 *   <dir>/adapters/<id>-lora-<i>/adapter_config.json  rank 16, alpha 32, q_proj and v_proj of every layer
 *   <dir>/adapters/<id>-lora-<i>/adapter_model.safetensors   (F32)
 *   <dir>/adapters/<id>-lora-<i>/hearth.json          {"base_model": "accounts/hearth/models/<id>"}
 *
 * A worker serves every .gguf in its model directory, so these go to a directory of their
 * own, never to the default model directory: a benchmark points HEARTH_MODEL_DIR at it.
 * Builds are deterministic and skip what is already there and complete.
 */

export interface BenchShape {
  /** The model ID: the file is <id>.gguf. */
  id: string;
  /** The real model whose shape this is. */
  like: string;
  shape: RandomLlamaShape;
}

/** SmolLM-135M / SmolLM2-135M (context and rope base of SmolLM2), output untied: about 175 MB. */
export const smolLm135mShape: BenchShape = {
  id: "smollm-135m-shape",
  like: "SmolLM2-135M",
  shape: {
    embeddingLength: 576,
    blockCount: 30,
    headCount: 9,
    headCountKv: 3,
    feedForwardLength: 1536,
    vocabSize: 49152,
    contextLength: 8192,
    ropeFreqBase: 100000,
    rmsEpsilon: 1e-5,
    tiedOutput: false,
  },
};

/** Llama-3.2-1B (output tied to the embeddings, as there; llama3 rope scaling left out): about 1.3 GB. */
export const llama32_1bShape: BenchShape = {
  id: "llama32-1b-shape",
  like: "Llama-3.2-1B",
  shape: {
    embeddingLength: 2048,
    blockCount: 16,
    headCount: 32,
    headCountKv: 8,
    feedForwardLength: 8192,
    vocabSize: 128256,
    contextLength: 8192,
    ropeFreqBase: 500000,
    rmsEpsilon: 1e-5,
    tiedOutput: true,
  },
};

export const BENCH_SEED = 20260101;
export const BENCH_LORA_RANK = 16;
export const BENCH_LORA_ALPHA = 32;
export const DEFAULT_BENCH_ADAPTERS = 8;

export interface BenchModelOptions {
  /** LoRA adapters to have (default 8); adapter i is seeded with i. */
  adapters?: number;
  /** The 1B-class shape instead of the 135M one. */
  large?: boolean;
  /** Any shape (tests use small ones); overrides `large`. */
  shape?: BenchShape;
  /** Rebuild everything even when present. */
  force?: boolean;
  /** Told before each artifact is written. */
  onWrite?: (artifact: string) => void;
}

export interface BenchModels {
  dir: string;
  baseModel: string;
  baseModelId: string;
  /** The model name adapters give as their base. */
  baseModelRef: string;
  adapterDirs: string[];
  /** The artifacts written by this call (empty when everything was already there). */
  written: string[];
}

export const benchModelRef = (id: string) => `accounts/hearth/models/${id}`;
export const benchAdapterName = (id: string, i: number) => `${id}-lora-${i}`;

export async function buildBenchModels(dir: string, options: BenchModelOptions = {}): Promise<BenchModels> {
  const bench = options.shape ?? (options.large ? llama32_1bShape : smolLm135mShape);
  const count = options.adapters ?? DEFAULT_BENCH_ADAPTERS;
  if (!Number.isSafeInteger(count) || count < 0)
    throw new Error(`adapter count ${count} is not a non-negative integer`);
  const force = options.force ?? false;
  const root = path.resolve(dir);
  const ref = benchModelRef(bench.id);
  const models: BenchModels = {
    dir: root,
    baseModel: path.join(root, `${bench.id}.gguf`),
    baseModelId: bench.id,
    baseModelRef: ref,
    adapterDirs: Array.from({ length: count }, (_, i) => path.join(root, "adapters", benchAdapterName(bench.id, i))),
    written: [],
  };
  const modelOptions = {
    name: bench.id,
    shape: bench.shape,
    seed: BENCH_SEED,
    description: `random weights in the shape of ${bench.like} (seed ${BENCH_SEED}), for benchmarks only`,
  };

  const baseFresh = !force && (await isBuiltModel(models.baseModel, randomLlamaPlan(modelOptions)));
  if (!baseFresh) {
    options.onWrite?.(models.baseModel);
    await writeFileAtomically(models.baseModel, (tmp) => writeRandomLlama(tmp, modelOptions));
    models.written.push(models.baseModel);
    await removeAdaptersFrom(path.join(root, "adapters"), bench.id, count);
  }

  const hearthJson = `${JSON.stringify({ base_model: ref })}\n`;
  for (const [i, adapterDir] of models.adapterDirs.entries()) {
    const state = await folderState(adapterDir, [PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE, "hearth.json"]);
    // Adapters made for a previous base are rebuilt with it.
    if (state === "complete" && baseFresh) continue;
    options.onWrite?.(adapterDir);
    await writeFolderAtomically(
      adapterDir,
      async (tmp) => {
        await writePeftAdapter(tmp, {
          baseModel: ref,
          rank: BENCH_LORA_RANK,
          alpha: BENCH_LORA_ALPHA,
          modules: randomQvLoraModules(bench.shape, { rank: BENCH_LORA_RANK, seed: i }),
        });
        await writeFile(path.join(tmp, "hearth.json"), hearthJson);
      },
      { replace: state !== "missing" },
    );
    models.written.push(adapterDir);
  }
  return models;
}

/**
 * Whether `file` is the model the plan describes: same tensors (names, types, shapes) and
 * the same identifying metadata. The header reader also checks the data fits in the file.
 */
async function isBuiltModel(file: string, { tensors, metadata }: RandomLlamaPlan): Promise<boolean> {
  if (!(await pathExists(file))) return false;
  const header = await readGgufHeader(file).catch(() => undefined);
  if (header === undefined || header.tensors.length !== tensors.length) return false;
  const sameTensors = header.tensors.every(
    (t, i) => t.name === tensors[i]!.name && t.type === tensors[i]!.type && t.shape.join() === tensors[i]!.shape.join(),
  );
  const sameMetadata = ["general.name", "general.description", "llama.context_length", "llama.rope.freq_base"].every(
    (key) => JSON.stringify(header.metadata.get(key)) === JSON.stringify(metadata[key]),
  );
  return sameTensors && sameMetadata;
}

/** Removes the adapters of model `id` numbered `from` and up: made for a previous base, they are not rebuilt. */
async function removeAdaptersFrom(adaptersDir: string, id: string, from: number): Promise<void> {
  const names = await readdir(adaptersDir).catch(() => [] as string[]);
  for (const name of names) {
    const match = /^(.+)-lora-(\d+)$/.exec(name);
    if (match?.[1] === id && Number(match[2]) >= from)
      await rm(path.join(adaptersDir, name), { recursive: true, force: true });
  }
}
