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
