/**
 * Token pieces as bytes and their UTF-8 shape: pieceShape on chosen byte strings, and
 * TokenPieces on a real byte-level vocabulary (the bench's, in a small model) against the
 * vocabulary the factory wrote, byte for byte.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getLlama, type Llama, LlamaLogLevel, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBenchModels } from "../../../src/models/factory/bench-models.js";
import { byteBpeVocab, specialTokens } from "../../../src/models/factory/byte-bpe-vocab.js";
import { gpt2ByteChars } from "../../../src/models/formats/gpt2-bytes.js";
import { TokenPieces, pieceShape } from "../../../src/workers/engine/token-pieces.js";
import { wideVocabShape } from "../../helpers/bench-shapes.js";

const shape = (...bytes: number[]) => pieceShape(Uint8Array.from(bytes));
const utf8 = (text: string) => [...new TextEncoder().encode(text)];

describe("pieceShape", () => {
  it("takes whole UTF-8, and characters cut at either end", () => {
    expect(shape(...utf8("a é火😀"))).toEqual({ continuing: undefined, trailingLead: undefined });
    // Ends inside a character: after C3 any continuation is well-formed; after a lone F0, only 90–BF.
    expect(shape(0x61, 0xc3)).toEqual({ continuing: undefined, trailingLead: undefined });
    expect(shape(0x61, 0xf0)).toEqual({ continuing: undefined, trailingLead: 0xf0 });
    expect(shape(0xe0)).toEqual({ continuing: undefined, trailingLead: 0xe0 });
    expect(shape(0xf0, 0x9f)).toEqual({ continuing: undefined, trailingLead: undefined });
    // Begins inside one: up to three continuation bytes.
    expect(shape(0xa9, 0x61)).toEqual({ continuing: 0xa9, trailingLead: undefined });
    expect(shape(0x9f, 0x98, 0x80)).toEqual({ continuing: 0x9f, trailingLead: undefined });
    expect(shape()).toEqual({ continuing: undefined, trailingLead: undefined });
  });

  it("refuses NUL and what is not UTF-8 inside the piece", () => {
    for (const bytes of [
      [0x00],
      [0x61, 0x00, 0x62],
      [0xc0, 0x80], // overlong NUL: llama.cpp's grammar reads U+0000
      [0xc0, 0xba], // overlong ':'
      [0xc1],
      [0xe0, 0x80], // overlong three-byte form
      [0xed, 0xa0], // a surrogate
      [0xf0, 0x80], // overlong four-byte form
      [0xf4, 0x90], // past U+10FFFF
      [0xf5],
      [0xff],
      [0xc3, 0x61], // a lead byte without its continuation
      [0x80, 0x80, 0x80, 0x80], // four continuation bytes
      [0x61, 0xa9], // a continuation byte after a whole character
    ]) {
      expect(shape(...bytes), bytes.map((b) => b.toString(16)).join(" ")).toBeUndefined();
    }
  });
});

describe("TokenPieces", () => {
  let dir: string;
  let llama: Llama;
  let model: LlamaModel;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hearth-token-pieces-"));
    const built = await buildBenchModels(dir, { shape: wideVocabShape, adapters: 0 });
    llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.error, maxThreads: 1 });
    model = await llama.loadModel({ modelPath: built.baseModel });
  });
  afterAll(async () => {
    await model?.dispose();
    await llama?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("gives every normal token's bytes as the vocabulary spells them, and control tokens none", () => {
    const vocab = byteBpeVocab(wideVocabShape.shape.vocabSize);
    const byteOf = new Map(gpt2ByteChars.map((char, byte) => [char, byte]));
    const pieces = new TokenPieces(model);
    expect(pieces.count).toBe(vocab.tokens.length);
    let notUtf8 = 0;
    for (let token = 0; token < pieces.count; token++) {
      const spelled = vocab.tokens[token]!;
      const bytes = pieces.bytes(token);
      if (vocab.tokenTypes[token] !== 1) {
        expect(bytes, `${token} ${spelled}`).toBeUndefined();
        continue;
      }
      const expected = [...spelled].map((char) => byteOf.get(char)!);
      if (model.detokenize([token as Token]).includes("\uFFFD")) {
        notUtf8++;
        expect(bytes && [...bytes], `${token} ${spelled}`).toEqual(expected);
      } else {
        // llama.cpp's text of a GPT-2 vocabulary's token may drop its space before punctuation (" !"), nothing else.
        const text = new TextDecoder().decode(Uint8Array.from(expected));
        const got = bytes && new TextDecoder().decode(bytes);
        expect([text, text.replace(/^ /, "")], `${token} ${spelled}`).toContain(got);
      }
      expect(bytes && pieceShape(bytes), `${token} ${spelled}`).toEqual(pieceShape(Uint8Array.from(expected)));
    }
    // Many are read from the vocabulary, node-llama-cpp's text of them having replacement characters.
    expect(notUtf8).toBeGreaterThan(10_000);
    expect(specialTokens.every((text) => pieces.bytes(vocab.special[text]) === undefined)).toBe(true);
  });
});
