import { createBigramOracle, type BigramOracle } from "./bigram-oracle.js";
import { demoTables } from "../../src/models/factory/demo-models.js";

let base: BigramOracle | undefined;
let adapted: BigramOracle | undefined;

/** What hearth-tiny (or, with `adapter`, hearth-tiny with its example LoRA) says greedily after `prompt`. */
export function greedyText(prompt: string, maxTokens: number, options: { adapter?: boolean } = {}): string {
  const tables = demoTables();
  base ??= createBigramOracle({ table: tables.base, shape: tables.shape });
  adapted ??= createBigramOracle({ table: tables.base, shape: tables.shape, lora: tables.lora });
  return (options.adapter ? adapted : base).greedy(prompt, maxTokens).text;
}
