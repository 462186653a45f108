import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkLlamaBaseModel } from "../../../src/models/base/base-model-check.js";
import { SPM_VOCAB_TINY_ID, spmVocabTiny } from "../../../src/models/factory/random-spm-llama.js";
import type { EngineContext, EngineModel } from "../../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { testSpmModelDir } from "../../helpers/test-models.js";

// spm-vocab-tiny (built by test/global-setup.ts) as llama.cpp reads it: a SentencePiece
// tokenizer with byte fallback that puts a BOS before every prompt.
describe("spm-vocab-tiny", () => {
  const file = path.join(testSpmModelDir, `${SPM_VOCAB_TINY_ID}.gguf`);
  const ids = (...tokens: string[]) => tokens.map(spmVocabTiny.id);
  let engine: LlamaEngine;
  let model: EngineModel;
  let context: EngineContext;

  beforeAll(async () => {
    engine = await LlamaEngine.create();
    model = await engine.loadModel({ id: SPM_VOCAB_TINY_ID, path: file, threads: 1 });
    context = await model.createContext({ sequences: 1, contextSize: 256, threads: 1 });
  });
  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
    await engine?.close();
  });

  it("is a servable llama base model", async () => {
    expect(await checkLlamaBaseModel(file)).toMatchObject({ architecture: "llama", vocabSize: 321 });
    expect(spmVocabTiny.tokens.slice(0, 4)).toEqual(["<unk>", "<s>", "</s>", "<0x00>"]);
    expect(spmVocabTiny.id("<0xFF>")).toBe(258);
  });

  it("tokenizes into pieces, ▁ for a space, and a character without a piece into its bytes", () => {
    expect(model.tokenize("the cat sat")).toEqual(ids("▁the", "▁cat", "▁sat"));
    expect(model.tokenize("the café €")).toEqual(
      ids("▁the", "▁ca", "f", "<0xC3>", "<0xA9>", "▁", "<0xE2>", "<0x82>", "<0xAC>"),
    );
    expect(model.tokenize("burns \uFFFD")).toEqual(ids("▁burns", "▁\uFFFD"));
  });

  it("puts its BOS before a prompt, unless the prompt starts with it", async () => {
    const read = async (promptTokens: number[]) =>
      (
        await context.generate(
          { promptTokens, sampling: { maxTokens: 1, temperature: 0, stop: [] } },
          new AbortController().signal,
          () => {},
        )
      ).promptTokens;
    expect(await read(ids("▁the", "▁cat"))).toBe(3);
    expect(await read(ids("<s>", "▁the", "▁cat"))).toBe(3);
  });
});
