import { describe, expect, it } from "vitest";
import { chatChunks } from "../../../src/api/openai/chat-chunks.js";
import { completionChunks } from "../../../src/api/openai/completion-chunks.js";
import { jsonTemplate } from "../../../src/api/openai/json-template.js";
import type { StreamEvent } from "../../../src/requests/stream.js";

// Texts a token may carry that JSON must escape, or that look like the template's own syntax.
const NASTY = [
  "",
  "plain",
  'quote " and \\ backslash',
  "new\nline\ttab\r\u0000nul\u001f",
  "é ü 中文 🔥",
  "\ud800 lone surrogate \udfff",
  "\u2028\u2029 line separators",
  '"},{"injected":true',
  "\u0000hole:text",
];

describe("jsonTemplate", () => {
  it("gives byte for byte what JSON.stringify of the filled value gives", () => {
    const value = (text: string, index: number) => ({
      id: "x",
      nested: { list: [1, text, null] },
      index,
      after: "end",
    });
    const render = jsonTemplate<{ text: string; index: number }>((hole) => value(hole("text"), hole("index")));
    for (const [i, text] of NASTY.entries()) {
      const out = render({ text, index: i * 7 });
      expect(out).toBe(JSON.stringify(value(text, i * 7)));
      expect(JSON.parse(out)).toEqual(value(text, i * 7));
    }
  });

  it("keeps constant parts that contain JSON escapes intact", () => {
    const id = 'weird "id" \\ \n';
    const render = jsonTemplate<{ n: number }>((hole) => ({ id, n: hole("n") }));
    expect(render({ n: 3 })).toBe(JSON.stringify({ id, n: 3 }));
  });

  it("refuses a hole placed twice, not placed, or used as a key", () => {
    expect(() => jsonTemplate<{ a: string }>((hole) => ({ x: hole("a"), y: hole("a") }))).toThrow(/once/);
    expect(() =>
      jsonTemplate<{ a: string }>((hole) => {
        hole("a");
        return { x: 1 };
      }),
    ).toThrow(/once/);
    expect(() => jsonTemplate<{ a: string }>((hole) => ({ [hole("a")]: 1 }))).toThrow(/once/);
  });
});

const usage = { promptTokens: 4, completionTokens: 3 };
const usageBody = {
  prompt_tokens: 4,
  completion_tokens: 3,
  total_tokens: 7,
  prompt_tokens_details: { cached_tokens: 0 },
};
const token = (text: string, index = 0): StreamEvent => ({ type: "token", index, text });

/** Every chunk's JSON, checked to be exactly `expected` with its keys in the same order. */
function expectChunks(jsons: string[], expected: object[]) {
  expect(jsons.map((j) => JSON.parse(j))).toEqual(expected);
  // Same keys, same order, same bytes: what JSON.stringify of the whole chunk gave before.
  expect(jsons).toEqual(expected.map((e) => JSON.stringify(e)));
}

describe("completion chunks", () => {
  const meta = {
    id: "cmpl-1",
    object: "text_completion" as const,
    created: 1_700_000_000,
    model: "accounts/a/models/m",
  };

  it("renders a token as the OpenAI text_completion chunk", () => {
    const render = completionChunks(meta, false);
    for (const text of NASTY) {
      expectChunks(render(token(text, 2)), [
        {
          id: "cmpl-1",
          object: "text_completion",
          created: 1_700_000_000,
          model: meta.model,
          choices: [{ text, index: 2, logprobs: null, finish_reason: null }],
        },
      ]);
    }
  });

  it("ends each choice, the last one with usage, then a usage-only chunk when asked", () => {
    const done: StreamEvent = {
      type: "done",
      choices: [
        { index: 0, finishReason: "length" },
        { index: 1, finishReason: "cancelled" },
      ],
      usage,
    };
    const base = { id: "cmpl-1", object: "text_completion", created: 1_700_000_000, model: meta.model };
    const ends = [
      { ...base, choices: [{ text: "", index: 0, logprobs: null, finish_reason: "length" }] },
      { ...base, choices: [{ text: "", index: 1, logprobs: null, finish_reason: "stop" }], usage: usageBody },
    ];
    expectChunks(completionChunks(meta, false)(done), ends);
    expectChunks(completionChunks(meta, true)(done), [...ends, { ...base, choices: [], usage: usageBody }]);
    expect(
      completionChunks(meta, true)({ type: "error", error: { code: "internal", message: "x", param: null } }),
    ).toEqual([]);
  });
});

describe("chat chunks", () => {
  const meta = { id: "chatcmpl-1", created: 1_700_000_000, model: "accounts/a/models/m" };
  const chunk = (choices: object[], extra: object = {}) => ({
    id: "chatcmpl-1",
    created: 1_700_000_000,
    model: meta.model,
    object: "chat.completion.chunk",
    choices,
    ...extra,
  });
  const delta = (index: number, d: object, finish: string | null = null) => ({
    index,
    delta: d,
    logprobs: null,
    finish_reason: finish,
  });

  it("names the role in each choice's first delta only", () => {
    const render = chatChunks(meta, false);
    const out = [token("He", 0), token("llo", 0), token('"x"', 1), token("\n", 1), token("!", 0)].flatMap((e) =>
      render(e),
    );
    expectChunks(out, [
      chunk([delta(0, { role: "assistant", content: "He" })]),
      chunk([delta(0, { content: "llo" })]),
      chunk([delta(1, { role: "assistant", content: '"x"' })]),
      chunk([delta(1, { content: "\n" })]),
      chunk([delta(0, { content: "!" })]),
    ]);
  });

  it("ends each choice (with the role for one that said nothing), usage last", () => {
    const render = chatChunks(meta, true);
    render(token("a", 0));
    const done: StreamEvent = {
      type: "done",
      choices: [
        { index: 0, finishReason: "stop" },
        { index: 1, finishReason: "length" },
      ],
      usage,
    };
    expectChunks(render(done), [
      chunk([delta(0, {}, "stop")]),
      chunk([delta(1, { role: "assistant", content: "" }, "length")], { usage: usageBody }),
      chunk([], { usage: usageBody }),
    ]);
  });
});
