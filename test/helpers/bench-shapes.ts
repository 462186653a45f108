import type { BenchShape } from "../../src/models/factory/bench-models.js";
import type { RandomLlamaShape } from "../../src/models/factory/random-llama.js";

/** A llama shape small enough for tests to build and run in a moment (random weights). */
export const tinyLlamaShape: RandomLlamaShape = {
  embeddingLength: 128,
  blockCount: 2,
  headCount: 4,
  headCountKv: 2,
  feedForwardLength: 256,
  vocabSize: 1024,
  contextLength: 512,
  ropeFreqBase: 10000,
  rmsEpsilon: 1e-5,
  tiedOutput: false,
};

/**
 * The tiny shape with the bench model's vocabulary size (smollm-135m-shape's 49 152 byte-level
 * BPE tokens): many of its pieces are not whole UTF-8 (C0 80, a lone lead byte…), as in real
 * byte-level vocabularies, which is what llama.cpp's grammar sampler mishandles.
 */
export const wideVocabShape: BenchShape = {
  id: "wide-vocab",
  like: "no model",
  shape: { ...tinyLlamaShape, vocabSize: 49152 },
};
