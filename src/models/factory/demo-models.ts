import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { folderState, pathExists, writeFileAtomically, writeFolderAtomically } from "../formats/atomic-output.js";
import { buildBigramTable, type BigramTable } from "./bigram.js";
import { bigramLora } from "./bigram-lora.js";
import { writeGgufLora } from "../formats/gguf-lora.js";
import type { LoraPair } from "../formats/lora-pair.js";
import { PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE, writePeftAdapter } from "./peft-adapter.js";
import { hearthTinyShape, writeTinyLlama, type TinyLlamaShape } from "./tiny-llama.js";
import { gguf } from "../formats/gguf-types.js";

/**
 * The demo models every Hearth installation can build offline, in about a second:
 *
 *   <dir>/hearth-tiny.gguf                                  the base model (bigram of corpus/base.txt)
 *   <dir>/examples/hearth-tiny-lora/adapter_config.json     its example LoRA in PEFT form
 *   <dir>/examples/hearth-tiny-lora/adapter_model.safetensors
 *   <dir>/examples/hearth-tiny-lora/hearth.json             {"base_model": "accounts/hearth/models/hearth-tiny"}
 *   <dir>/examples/hearth-tiny-lora-gguf/adapter.gguf        the same LoRA in llama.cpp's GGUF form
 *   <dir>/examples/hearth-tiny-lora-gguf/hearth.json
 *
 * The LoRA moves the model toward the bigram of corpus/adapter.txt. Builds are
 * deterministic: the same sources give the same bytes.
 */

export const HEARTH_TINY_ID = "hearth-tiny";
export const HEARTH_TINY_REF = "accounts/hearth/models/hearth-tiny";
const HEARTH_TINY_DESCRIPTION =
  "A byte-level bigram model counted from a text in Hearth's repository and written into llama " +
  "weights, for the tests: it knows one character of context, so greedily it says 'the the the'. " +
  "For readable demo text use hearth-demo.";
export const DEMO_LORA_RANK = 16;

export interface DemoTables {
  shape: TinyLlamaShape;
  base: BigramTable;
  /** The table the adapter approximates (the LoRA itself is rank-limited). */
  adapterTarget: BigramTable;
  lora: { pair: LoraPair; alpha: number };
}

export interface DemoModels {
  dir: string;
  baseModel: string;
  peftAdapterDir: string;
  ggufAdapterDir: string;
  ggufAdapter: string;
  /** The artifacts written by this call (empty when everything was already there). */
  written: string[];
}

let memo: DemoTables | undefined;

/** The demo models' numbers, in memory (computed once per process). */
export function demoTables(): DemoTables {
  if (memo === undefined) {
    const corpus = (name: string) => readFileSync(new URL(`./corpus/${name}`, import.meta.url));
    const base = buildBigramTable(corpus("base.txt"));
    const adapterTarget = buildBigramTable(corpus("adapter.txt"));
    const pair = bigramLora(base, adapterTarget, hearthTinyShape, DEMO_LORA_RANK);
    memo = { shape: hearthTinyShape, base, adapterTarget, lora: { pair, alpha: DEMO_LORA_RANK } };
  }
  return memo;
}

export interface BuildDemoOptions {
  /** Rebuild what is already there. */
  force?: boolean;
  /** Called as each artifact's build begins: its number of `total`, and what it is. */
  onStep?: (step: { index: number; total: number; what: string }) => void;
}

export async function buildDemoModels(dir: string, options: BuildDemoOptions = {}): Promise<DemoModels> {
  const force = options.force ?? false;
  const step = (index: number, what: string) => options.onStep?.({ index, total: 3, what });
  const root = path.resolve(dir);
  const models: DemoModels = {
    dir: root,
    baseModel: path.join(root, `${HEARTH_TINY_ID}.gguf`),
    peftAdapterDir: path.join(root, "examples", `${HEARTH_TINY_ID}-lora`),
    ggufAdapterDir: path.join(root, "examples", `${HEARTH_TINY_ID}-lora-gguf`),
    ggufAdapter: path.join(root, "examples", `${HEARTH_TINY_ID}-lora-gguf`, "adapter.gguf"),
    written: [],
  };
  const hearthJson = `${JSON.stringify({ base_model: HEARTH_TINY_REF })}\n`;

  if (force || !(await pathExists(models.baseModel))) {
    step(1, `${HEARTH_TINY_ID}.gguf, the base model (its tables computed from corpus/base.txt)`);
    const { base, shape } = demoTables();
    await writeFileAtomically(models.baseModel, (tmp) =>
      writeTinyLlama(tmp, {
        table: base,
        shape,
        name: HEARTH_TINY_ID,
        extraMetadata: { "general.description": gguf.str(HEARTH_TINY_DESCRIPTION) },
      }),
    );
    models.written.push(models.baseModel);
  }

  const peftState = await folderState(models.peftAdapterDir, [PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE, "hearth.json"]);
  if (force || peftState !== "complete") {
    step(2, `examples/${HEARTH_TINY_ID}-lora, the example LoRA in PEFT form`);
    const { lora } = demoTables();
    await writeFolderAtomically(
      models.peftAdapterDir,
      async (tmp) => {
        await writePeftAdapter(tmp, {
          baseModel: HEARTH_TINY_REF,
          rank: lora.pair.rank,
          alpha: lora.alpha,
          modules: [{ module: "lm_head", pair: lora.pair }],
        });
        await writeFile(path.join(tmp, "hearth.json"), hearthJson);
      },
      { replace: force || peftState === "incomplete" },
    );
    models.written.push(models.peftAdapterDir);
  }

  const ggufState = await folderState(models.ggufAdapterDir, ["adapter.gguf", "hearth.json"]);
  if (force || ggufState !== "complete") {
    step(3, `examples/${HEARTH_TINY_ID}-lora-gguf, the example LoRA in GGUF form`);
    const { lora } = demoTables();
    await writeFolderAtomically(
      models.ggufAdapterDir,
      async (tmp) => {
        await writeGgufLora(path.join(tmp, "adapter.gguf"), {
          architecture: "llama",
          name: `${HEARTH_TINY_ID}-lora`,
          alpha: lora.alpha,
          weights: [{ tensor: "output.weight", pair: lora.pair }],
        });
        await writeFile(path.join(tmp, "hearth.json"), hearthJson);
      },
      { replace: force || ggufState === "incomplete" },
    );
    models.written.push(models.ggufAdapterDir);
  }
  return models;
}
