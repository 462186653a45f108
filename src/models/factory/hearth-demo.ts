import { readFileSync } from "node:fs";
import path from "node:path";
import { pathExists, writeFileAtomically } from "../formats/atomic-output.js";
import { writeNgramLlama } from "./ngram-llama.js";
import { buildWordNgram, type WordNgram } from "./word-ngram.js";
import { trainWordVocab, type WordVocab } from "./word-vocab.js";

/**
 * hearth-demo: the demo model that writes readable text. A word 4-gram of corpus/base.txt
 * (word-ngram.ts) written into the weights of a one-layer llama (ngram-llama.ts), with a
 * vocabulary in which every word of that text is one token (word-vocab.ts).
 *
 *   <dir>/hearth-demo.gguf
 */

export const HEARTH_DEMO_ID = "hearth-demo";
export const HEARTH_DEMO_REF = "accounts/hearth/models/hearth-demo";

const DESCRIPTION =
  "A word 4-gram language model counted from a text in Hearth's repository and written into " +
  "the weights of a one-layer llama transformer: not a neural network trained on language.";

export interface HearthDemoTables {
  vocab: WordVocab;
  ngram: WordNgram;
}

let memo: HearthDemoTables | undefined;

/** hearth-demo's vocabulary and n-gram, in memory (computed once per process). */
export function hearthDemoTables(): HearthDemoTables {
  if (memo === undefined) {
    const text = readFileSync(new URL("./corpus/base.txt", import.meta.url), "utf8");
    const vocab = trainWordVocab(text);
    memo = { vocab, ngram: buildWordNgram(text, vocab) };
  }
  return memo;
}

/** Writes <dir>/hearth-demo.gguf unless it is there (or `force`); returns its path and whether it was written. */
export async function buildHearthDemo(
  dir: string,
  options: { force?: boolean } = {},
): Promise<{ file: string; written: boolean }> {
  const file = path.join(path.resolve(dir), `${HEARTH_DEMO_ID}.gguf`);
  if (!options.force && (await pathExists(file))) return { file, written: false };
  const { vocab, ngram } = hearthDemoTables();
  await writeFileAtomically(file, (tmp) =>
    writeNgramLlama(tmp, { model: ngram, vocab, name: HEARTH_DEMO_ID, description: DESCRIPTION }),
  );
  return { file, written: true };
}
