import path from "node:path";
import { writeFileAtomically } from "../formats/atomic-output.js";
import { writeRandomLlama, type RandomLlamaShape } from "./random-llama.js";
import { SPM_SPACE, sentencePieceVocab } from "./sentencepiece-vocab.js";

/**
 * spm-vocab-tiny: a tiny llama model with random weights and a SentencePiece vocabulary
 * (sentencepiece-vocab.ts), for tests of what such a model gives Hearth and no BPE one does:
 * a BOS token put before every prompt, byte-fallback tokens `<0xNN>`, pieces spelled with `▁`.
 * Its pieces are the lowercase letters, a few punctuation marks and a few words, and `▁�`, a
 * piece with U+FFFD in it (a replacement character in the vocabulary, not a byte cut from a
 * character); anything else (capitals, digits, "é") is written in byte tokens. A few hundred
 * kilobytes, built in milliseconds.
 */

export const SPM_VOCAB_TINY_ID = "spm-vocab-tiny";

const alphabet = [SPM_SPACE, ..."abcdefghijklmnopqrstuvwxyz", ".", ",", "!", "?"];
const words = ["the", "a", "cat", "sat", "on", "mat", "hearth", "fire", "burns", "\uFFFD"].map((w) => SPM_SPACE + w);

export const spmVocabTiny = sentencePieceVocab(alphabet, words);

/** Its shape, for tests that make adapters of it. */
export const spmVocabTinyShape: RandomLlamaShape = {
  vocabSize: spmVocabTiny.tokens.length,
  embeddingLength: 64,
  blockCount: 1,
  headCount: 2,
  headCountKv: 1,
  feedForwardLength: 128,
  contextLength: 2048,
  ropeFreqBase: 10_000,
  rmsEpsilon: 1e-5,
  tiedOutput: false,
};

/** Writes `<dir>/spm-vocab-tiny.gguf` and returns its path. */
export async function buildSpmVocabModel(dir: string): Promise<string> {
  const file = path.join(path.resolve(dir), `${SPM_VOCAB_TINY_ID}.gguf`);
  const seed = 5;
  await writeFileAtomically(file, (tmp) =>
    writeRandomLlama(tmp, {
      name: SPM_VOCAB_TINY_ID,
      shape: spmVocabTinyShape,
      seed,
      description: `random weights (seed ${seed}) with a SentencePiece vocabulary, for tests`,
      weightType: "F32",
      vocabulary: spmVocabTiny,
    }),
  );
  return file;
}
