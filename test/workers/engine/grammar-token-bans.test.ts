/**
 * Under a grammar, Hearth bans the tokens llama.cpp's grammar misreads (grammar-token-bans.ts),
 * so that on a byte-level vocabulary like the bench model's (here in a small model) structured
 * output always parses and validates. Before the bans, these generations ended the process
 * (llama.cpp refusing a sampled token it had let through; sampling-guard.test.ts) or wrote
 * NUL bytes outside strings.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { getLlama, LlamaLogLevel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBenchModels } from "../../../src/models/factory/bench-models.js";
import { byteBpeVocab } from "../../../src/models/factory/byte-bpe-vocab.js";
import { gpt2ByteChars } from "../../../src/models/formats/gpt2-bytes.js";
import type { OutputConstraint } from "../../../src/domain/generation.js";
import type { TokenLogprob } from "../../../src/domain/logprobs.js";
import type { EngineContext, EngineModel } from "../../../src/workers/engine/engine.js";
import { BANNED_LOGIT } from "../../../src/workers/engine/token-bias.js";
import { GrammarTokenBans } from "../../../src/workers/engine/grammar-token-bans.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { pieceShape } from "../../../src/workers/engine/token-pieces.js";
import { wideVocabShape } from "../../helpers/bench-shapes.js";

/** The bench's kind of schema (records), with characters of two, three and four bytes to write. */
const SCHEMA = {
  type: "array",
  minItems: 3,
  maxItems: 3,
  items: {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 12 },
      score: { type: "number" },
      tags: { type: "array", items: { enum: ["red", "grün", "火", "😀"] }, maxItems: 3 },
      active: { type: "boolean" },
    },
    required: ["name", "score", "tags", "active"],
    additionalProperties: false,
  },
};
const SEQUENCES = 4;
const ROUNDS = 8;

describe("grammar token bans", () => {
  let dir: string;
  let modelPath: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hearth-grammar-bans-"));
    modelPath = (await buildBenchModels(dir, { shape: wideVocabShape, adapters: 0 })).baseModel;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("are the pieces that are not UTF-8 (cut characters aside) and the control tokens", async () => {
    const llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error, maxThreads: 1 });
    const model = await llama.loadModel({ modelPath });
    try {
      const vocab = byteBpeVocab(wideVocabShape.shape.vocabSize);
      const byteOf = new Map(gpt2ByteChars.map((char, byte) => [char, byte]));
      const bytesOf = (token: number) => Uint8Array.from([...vocab.tokens[token]!].map((char) => byteOf.get(char)!));
      const expected: number[] = [];
      for (const [token, type] of vocab.tokenTypes.entries()) {
        if (model.isEogToken(token as Token)) continue;
        if (type !== 1 || pieceShape(bytesOf(token)) === undefined) expected.push(token);
      }
      const bans = await GrammarTokenBans.of(model);
      expect([...bans.after(undefined).keys]).toEqual(expected);
      expect(expected).toContain(37379); // C0 80, which llama.cpp's grammar reads as U+0000
      expect(bans.after(undefined).values.every((v) => v === Math.fround(BANNED_LOGIT))).toBe(true);

      // After a lone F0, a piece may go on only with 90–BF (no overlong four-byte form).
      const loneF0 = vocab.tokens.findIndex((_, token) => bytesOf(token).join() === "240");
      const after = new Set(bans.after(loneF0).keys);
      for (const [token] of vocab.tokens.entries()) {
        const first = bytesOf(token)[0];
        if (vocab.tokenTypes[token] !== 1 || first === undefined || first < 0x80 || first > 0xbf) continue;
        if (pieceShape(bytesOf(token)) === undefined) continue;
        expect(after.has(token), `${token} after F0`).toBe(first < 0x90);
      }
      expect(await GrammarTokenBans.of(model)).toBe(bans);
    } finally {
      await model.dispose();
      await llama.dispose();
    }
  });

  describe("through the engine", () => {
    let engine: LlamaEngine;
    let model: EngineModel;
    let context: EngineContext;
    const ajv = new Ajv2020({ strict: false });

    beforeAll(async () => {
      engine = await LlamaEngine.create();
      model = await engine.loadModel({ id: wideVocabShape.id, path: modelPath, threads: 1 });
      context = await model.createContext({ sequences: SEQUENCES, contextSize: 4096, threads: 1 });
    });
    afterAll(async () => {
      await context?.dispose();
      await model?.dispose();
      await engine?.close();
    });

    it("keeps every output of a JSON schema valid, at any seed, with sequences side by side", async () => {
      const validate = ajv.compile(SCHEMA);
      const generate = async (seed: number) => {
        let text = "";
        const result = await context.generate(
          {
            promptTokens: model.tokenize("Records: "),
            sampling: {
              maxTokens: null,
              temperature: 1 + (seed % 3) / 4,
              seed,
              stop: [],
              constraint: { type: "json_schema", schema: SCHEMA },
            },
          },
          new AbortController().signal,
          (t) => (text += t),
        );
        return { seed, text, ...result };
      };
      for (let round = 0; round < ROUNDS; round++) {
        const seeds = Array.from({ length: SEQUENCES }, (_, i) => round * SEQUENCES + i);
        for (const run of await Promise.all(seeds.map(generate))) {
          expect(run.finishReason, `seed ${run.seed}: ${run.text}`).toBe("stop");
          expect(run.text).not.toContain("\u0000");
          expect(run.text).not.toContain("\uFFFD");
          const value = JSON.parse(run.text);
          expect(validate(value), `seed ${run.seed}: ${run.text}\n${JSON.stringify(validate.errors)}`).toBe(true);
        }
      }
    }, 300_000);

    it("leave logprobs the unconstrained model's", async () => {
      const firstEntry = async (constraint?: OutputConstraint) => {
        const entries: TokenLogprob[] = [];
        await context.generate(
          {
            promptTokens: model.tokenize("Records: "),
            sampling: { maxTokens: 1, temperature: 1, seed: 7, stop: [], ...(constraint ? { constraint } : {}) },
            logprobs: 20,
          },
          new AbortController().signal,
          (_, logprobs) => entries.push(...(logprobs ?? [])),
        );
        return entries[0]!;
      };
      const free = await firstEntry();
      const constrained = await firstEntry({ type: "json_schema", schema: SCHEMA });
      // The first position's alternatives are the same distribution's, banned tokens (not UTF-8) among them.
      expect(constrained.top).toEqual(free.top);
      expect(free.top.some((alternative) => alternative.token.includes("\\x"))).toBe(true);
    });
  });
});
