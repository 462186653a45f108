import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { buildBigramTable } from "../../src/models/factory/bigram.js";
import { bigramLora } from "../../src/models/factory/bigram-lora.js";
import { createBigramOracle } from "./bigram-oracle.js";
import { HEARTH_TINY_REF, demoTables } from "../../src/models/factory/demo-models.js";
import { writeGgufLora } from "../../src/models/formats/gguf-lora.js";
import { writePeftAdapter } from "../../src/models/factory/peft-adapter.js";

export interface TestAdapter {
  dir: string;
  /** What hearth-tiny with this adapter says greedily after `prompt`. */
  greedy(prompt: string, maxTokens: number): string;
}

/**
 * An adapter folder for hearth-tiny that moves it toward the bigram of `text`, in PEFT
 * (lm_head) or GGUF form, with the oracle that predicts its greedy output.
 */
export async function writeAdapterToward(
  dir: string,
  text: string,
  options: { format?: "peft" | "gguf"; rank?: number } = {},
): Promise<TestAdapter> {
  const { base, shape } = demoTables();
  const rank = options.rank ?? 8;
  const pair = bigramLora(base, buildBigramTable(text), shape, rank);
  await mkdir(dir, { recursive: true });
  if ((options.format ?? "peft") === "peft") {
    await writePeftAdapter(dir, {
      baseModel: HEARTH_TINY_REF,
      rank,
      alpha: rank,
      modules: [{ module: "lm_head", pair }],
    });
  } else {
    await writeGgufLora(path.join(dir, "adapter.gguf"), {
      architecture: "llama",
      name: path.basename(dir),
      alpha: rank,
      weights: [{ tensor: "output.weight", pair }],
    });
  }
  await writeFile(path.join(dir, "hearth.json"), JSON.stringify({ base_model: HEARTH_TINY_REF }));
  const oracle = createBigramOracle({ table: base, shape, lora: { pair, alpha: rank } });
  return { dir, greedy: (prompt, maxTokens) => oracle.greedy(prompt, maxTokens).text };
}
