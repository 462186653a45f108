import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sampling } from "../../../src/domain/generation.js";
import type { LogprobToken, TokenLogprob } from "../../../src/domain/logprobs.js";
import { SPM_VOCAB_TINY_ID, spmVocabTiny } from "../../../src/models/factory/random-spm-llama.js";
import type { EchoedPrompt, EngineContext, EngineModel, GenerateRequest } from "../../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { testSpmModelDir } from "../../helpers/test-models.js";

const CONTEXT = 256;
const BOS = spmVocabTiny.id("<s>");
const id = spmVocabTiny.id;

/** Tokens as compared across runs: text, bytes, logprob to 4 decimals. */
const shown = (entries: readonly LogprobToken[]) =>
  entries.map((e) => ({ token: e.token, bytes: e.bytes, logprob: e.logprob === null ? null : e.logprob.toFixed(4) }));

// Logprobs, echo and truncation on spm-vocab-tiny (random weights, a SentencePiece vocabulary
// with byte fallback, a BOS put before every prompt): what hearth-tiny's byte-level BPE
// vocabulary without a BOS never shows. Random weights have no oracle: a logprob is checked
// against the same position read in another way.
describe("logprobs on a SentencePiece model with a BOS token", () => {
  let engine: LlamaEngine;
  let model: EngineModel;
  let context: EngineContext;

  beforeAll(async () => {
    engine = await LlamaEngine.create();
    const file = path.join(testSpmModelDir, `${SPM_VOCAB_TINY_ID}.gguf`);
    model = await engine.loadModel({ id: SPM_VOCAB_TINY_ID, path: file, threads: 1 });
    context = await model.createContext({ sequences: 1, contextSize: CONTEXT, threads: 1 });
  });
  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
    await engine?.close();
  });

  const sampling = (extra: Partial<Sampling>): Sampling => ({ maxTokens: 4, temperature: 0, stop: [], ...extra });

  /** Generates after `prompt` (text, or token IDs); `prompted` is the echo's logprobs. */
  async function run(
    prompt: string | number[],
    request: Omit<Partial<GenerateRequest>, "echo"> & { sampling: Sampling; echo?: boolean },
  ) {
    let text = "";
    const logprobs: TokenLogprob[] = [];
    let echoed: EchoedPrompt | undefined;
    const { echo, ...rest } = request;
    const result = await context.generate(
      {
        promptTokens: typeof prompt === "string" ? model.tokenize(prompt) : prompt,
        ...rest,
        ...(echo ? { echo: (p: EchoedPrompt) => (echoed = p) } : {}),
      },
      new AbortController().signal,
      (t, l) => {
        text += t;
        if (l) logprobs.push(...l);
      },
    );
    return { text, logprobs, echoed, prompted: echoed?.logprobs ?? [], ...result };
  }

  it("gives a byte-fallback token its byte, escaped, and a ▁ piece its text with the space", async () => {
    const r = await run("the café \uFFFD", { sampling: sampling({ maxTokens: 1 }), logprobs: 3, echo: true });
    expect(r.echoed!.text).toBe("the café \uFFFD");
    expect(r.prompted.map(({ token, bytes, offset }) => ({ token, bytes, offset }))).toEqual([
      { token: " the", bytes: [0x20, 0x74, 0x68, 0x65], offset: 0 },
      { token: " ca", bytes: [0x20, 0x63, 0x61], offset: 3 },
      { token: "f", bytes: [0x66], offset: 6 },
      { token: "\\xc3", bytes: [0xc3], offset: 7 },
      { token: "\\xa9", bytes: [0xa9], offset: 7 },
      // A piece with a replacement character of its own: its bytes from the vocabulary, ▁ a space.
      { token: " \uFFFD", bytes: [0x20, 0xef, 0xbf, 0xbd], offset: 8 },
    ]);
    // The alternatives too: a byte token among them as its escaped byte.
    const alternatives = r.prompted.flatMap((e) => e.top);
    expect(alternatives).toHaveLength(6 * 3);
    for (const a of alternatives) {
      const byte = a.bytes!.length === 1 && a.bytes![0]! >= 0x80 ? a.bytes![0]! : undefined;
      expect(a.token).toBe(byte === undefined ? Buffer.from(a.bytes!).toString() : `\\x${byte.toString(16)}`);
    }
    expect(alternatives.some((a) => a.token.startsWith("\\x"))).toBe(true);
  });

  it("goes on after the prompt: a generated ▁ piece keeps its space, and a byte token is its byte", async () => {
    const sat = await run("the cat", {
      sampling: sampling({ maxTokens: 2, logitBias: [[id("▁sat"), 100]] }),
      logprobs: 1,
    });
    expect(sat.text).toBe(" sat sat");
    expect(sat.logprobs.map(({ token, bytes, offset }) => ({ token, bytes, offset }))).toEqual([
      { token: " sat", bytes: [0x20, 0x73, 0x61, 0x74], offset: 0 },
      { token: " sat", bytes: [0x20, 0x73, 0x61, 0x74], offset: 4 },
    ]);
    const byte = await run("the cat", {
      sampling: sampling({ maxTokens: 1, logitBias: [[id("<0xC3>"), 100]] }),
      logprobs: 2,
    });
    expect(byte.logprobs).toHaveLength(1);
    expect(byte.logprobs[0]).toMatchObject({ token: "\\xc3", bytes: [0xc3] });
    expect(byte.logprobs[0]!.top[0]).toMatchObject({ token: "\\xc3", bytes: [0xc3] });
  });

  it("echoes a prompt without the BOS it put first, its first token scored after that BOS", async () => {
    // The distribution after the BOS alone: what generation from an empty prompt sees.
    const afterBos = await run([], { sampling: sampling({ maxTokens: 1 }), logprobs: 5 });
    expect(afterBos.promptTokens).toBe(1);
    const r = await run("the cat", { sampling: sampling({}), logprobs: 5, echo: true });
    expect(r.promptTokens).toBe(3);
    expect(r.echoed).toMatchObject({ text: "the cat", truncated: false });
    expect(r.prompted.map((e) => e.token)).toEqual([" the", " cat"]);
    expect(r.prompted[0]!.logprob).not.toBeNull();
    expect(shown(r.prompted[0]!.top)).toEqual(shown(afterBos.logprobs[0]!.top));
  });

  it("echoes a BOS among the token IDs given, unscored and without text, the rest as without it", async () => {
    const without = await run([id("▁the"), id("▁cat")], { sampling: sampling({}), logprobs: 2, echo: true });
    const r = await run([BOS, id("▁the"), id("▁cat")], { sampling: sampling({}), logprobs: 2, echo: true });
    // The BOS given is the one the model reads: none is added.
    expect(r.promptTokens).toBe(3);
    expect(r.echoed!.text).toBe("the cat");
    expect(r.prompted[0]).toEqual({ token: "<s>", bytes: [...Buffer.from("<s>")], logprob: null, top: [], offset: 0 });
    expect(shown(r.prompted.slice(1))).toEqual(shown(without.prompted));
    expect(r.prompted.slice(1).map((e) => e.offset)).toEqual([0, 3]);
    expect(r.text).toBe(without.text);
  });

  it("truncates a prompt after its BOS, keeping its end: what it reads is the kept end after a BOS", async () => {
    const tokens = model.tokenize(`${"the cat sat on the mat. ".repeat(45)}Hearth!`);
    expect(tokens.length).toBeGreaterThan(CONTEXT);
    const overflow = sampling({ maxTokens: 6, onContextOverflow: "truncate" });
    const kept = tokens.slice(-(CONTEXT - 6 - 1));
    // The kept end as a prompt of its own, which fits: the engine puts the BOS before it.
    const whole = await run(kept, { sampling: sampling({ maxTokens: 6 }), logprobs: 1, echo: true });
    expect(whole.promptTokens).toBe(CONTEXT - 6);

    const cut = await run(tokens, { sampling: overflow, logprobs: 1, echo: true });
    expect(cut.promptTokens).toBe(CONTEXT - 6);
    expect(cut.echoed).toMatchObject({ text: whole.echoed!.text, truncated: true });
    expect(cut.echoed!.text.endsWith("mat. Hearth!")).toBe(true);
    expect(cut.prompted).toHaveLength(kept.length);
    expect(cut.prompted[0]!.logprob).not.toBeNull();
    expect(shown(cut.prompted)).toEqual(shown(whole.prompted));
    expect(cut.text).toBe(whole.text);

    // The same prompt with its BOS given: the BOS kept and shown, the rest the same.
    const given = await run([BOS, ...tokens], { sampling: overflow, logprobs: 1, echo: true });
    expect(given.promptTokens).toBe(CONTEXT - 6);
    expect(given.prompted[0]).toMatchObject({ token: "<s>", logprob: null });
    expect(shown(given.prompted.slice(1))).toEqual(shown(whole.prompted));

    // With max_tokens null, a prompt that fills the context keeps its last half, the BOS first.
    const half = await run(tokens, {
      sampling: sampling({ maxTokens: null, onContextOverflow: "truncate" }),
      echo: true,
    });
    const halfKept = await run(tokens.slice(-(CONTEXT / 2 - 1)), { sampling: sampling({ maxTokens: 1 }), echo: true });
    expect(half.promptTokens).toBe(CONTEXT / 2);
    expect(half.echoed).toEqual({ text: halfKept.echoed!.text, truncated: true });
  });
});
