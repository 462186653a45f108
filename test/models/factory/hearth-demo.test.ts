/**
 * hearth-demo under the real engine: node-llama-cpp (llama.cpp, CPU) loads it, tokenizes every
 * word of its source text as one token, generates greedily exactly what the word oracle
 * predicts, and gives the n-gram's probabilities as its next-token distribution. Its greedy
 * text meets the demo's targets on the README's prompts.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { LlamaLogLevel, getLlama, type Llama, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkLlamaBaseModel } from "../../../src/models/base/base-model-check.js";
import { buildHearthDemo, hearthDemoTables } from "../../../src/models/factory/hearth-demo.js";
import { pretokenize } from "../../../src/models/factory/word-vocab.js";
import { renderDefaultChat } from "../../../src/workers/engine/default-chat-template.js";
import { demoGreedyChat, demoGreedyText, demoGreedyTokens, demoTokens } from "../../helpers/word-oracle.js";
import { greedyTokens } from "../../helpers/greedy-tokens.js";

const source = readFileSync(new URL("../../../src/models/factory/corpus/base.txt", import.meta.url), "utf8");
const chat = (content: string) => renderDefaultChat([{ role: "user", content }]);
const PROMPTS = [
  "The fire",
  "The fire ",
  "Once upon a time",
  "A hearth is",
  "Hello",
  "x",
  "naïve café 🔥",
  chat("Hello"),
];
const TOKENS = 48;
const THREADS = 1;

let root: string;
let llama: Llama;
let model: LlamaModel;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "hearth-demo-model-"));
  const { file } = await buildHearthDemo(root);
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  model = await llama.loadModel({ modelPath: file });
});

afterAll(async () => {
  await model?.dispose();
  await llama?.dispose();
  await rm(root, { recursive: true, force: true });
});

/** The words of a text, lower-cased: runs of letters. */
const wordsOf = (text: string) => (text.toLowerCase().match(/\p{L}+/gu) ?? []) as string[];

describe("hearth-demo in node-llama-cpp", () => {
  it("passes the base-model check", async () => {
    const summary = await checkLlamaBaseModel(path.join(root, "hearth-demo.gguf"));
    expect(summary.architecture).toBe("llama");
  });

  it("tokenizes as the oracle does, every word of its source text one token", () => {
    const { vocab } = hearthDemoTables();
    const words = pretokenize(source);
    expect(model.tokenize(source)).toEqual(words.map((w) => vocab.wordIds.get(w)));
    for (const prompt of PROMPTS) expect(model.tokenize(prompt), prompt).toEqual(demoTokens(prompt));
  });

  it("generates greedily exactly what the word oracle predicts", async () => {
    const context = await model.createContext({ contextSize: 512, threads: THREADS });
    try {
      for (const prompt of PROMPTS) {
        expect(await greedyTokens(model, context, prompt, TOKENS), prompt).toEqual(
          demoGreedyTokens(demoTokens(prompt), TOKENS),
        );
      }
    } finally {
      await context.dispose();
    }
  });

  it("gives the n-gram's probabilities as its next-token distribution", async () => {
    const { ngram } = hearthDemoTables();
    const context = await model.createContext({ contextSize: 512, threads: THREADS });
    const sequence = context.getSequence();
    try {
      const prompt = "The fire is";
      const generator = sequence.evaluateWithMetadata(
        model.tokenize(prompt),
        { probabilities: true },
        { temperature: 0 },
      );
      const first = await generator.next();
      await generator.return();
      if (first.done) throw new Error("no token generated");
      const engine = new Map(first.value.probabilities);
      const history = demoTokens(prompt).map((t) => ngram.classOf[t]!);
      const row = ngram.row(history);
      for (let c = 0; c < row.length; c++) {
        const p = Math.exp(row[c]!);
        expect(Math.abs((engine.get(ngram.wordTokens[c]! as Token) ?? 0) - p), `word ${c}`).toBeLessThan(2e-3);
      }
    } finally {
      sequence.dispose();
      await context.dispose();
    }
  });
});

describe("hearth-demo's greedy text on the README's prompts", () => {
  const sourceWords = new Set(wordsOf(source));
  const replies = [
    ...["The fire", "The fire ", "Once upon a time", "A hearth is"].map((p) => demoGreedyText(p, 64)),
    ...["Hello", "Hello, who are you?", "Tell me about LoRA adapters."].map((m) => demoGreedyChat(m, 64)),
  ];

  it.each(replies)("repeats no word three times in a row: %j", (reply) => {
    const words = wordsOf(reply);
    expect(words.length).toBeGreaterThan(20);
    for (let i = 2; i < words.length; i++)
      expect(words[i - 2] === words[i - 1] && words[i - 1] === words[i]).toBe(false);
  });

  it.each(replies)("is at least 80 %% words of its source text: %j", (reply) => {
    const words = wordsOf(reply);
    expect(words.filter((w) => sourceWords.has(w)).length / words.length).toBeGreaterThanOrEqual(0.8);
  });

  it("starts the README's completion as the README shows", () => {
    expect(demoGreedyText("The fire", 32)).toMatch(/^\. The hearth was the middle of/);
  });
});
