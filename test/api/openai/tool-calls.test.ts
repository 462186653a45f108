import { Ajv } from "ajv";
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QWEN3_VOCAB_TINY_ID } from "../../../src/models/factory/random-qwen3.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { testQwen3ModelDir } from "../../helpers/test-models.js";

const MODEL = `accounts/hearth/models/${QWEN3_VOCAB_TINY_ID}`;

// The grammar makes any model's arguments valid, not short: random weights write strings until a
// bound stops them, so the schemas bound their strings and arrays to end within max_tokens.
const weather: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string", maxLength: 12 },
        unit: { enum: ["celsius", "fahrenheit"] },
        days: { type: "integer" },
      },
      required: ["city", "unit", "days"],
      additionalProperties: false,
    },
  },
};
const search: ChatCompletionTool = {
  type: "function",
  function: {
    name: "search",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", maxLength: 16 },
        exact: { type: "boolean" },
        tags: { type: "array", items: { type: "string", maxLength: 8 }, maxItems: 3 },
      },
      required: ["query", "exact", "tags"],
      additionalProperties: false,
    },
  },
};
const tools = [weather, search];
const validators = new Map(
  tools.map((t) => [t.function.name, new Ajv({ strict: false }).compile(t.function.parameters ?? {})] as const),
);

function expectValidCall(call: { type: string; id: string; function: { name: string; arguments: string } }) {
  expect(call.type).toBe("function");
  expect(call.id).toMatch(/^call_/);
  const validate = validators.get(call.function.name);
  expect(validate, call.function.name).toBeDefined();
  const args = JSON.parse(call.function.arguments);
  expect(validate!(args), `${call.function.arguments}: ${JSON.stringify(validate!.errors)}`).toBe(true);
}

const user: ChatCompletionMessageParam[] = [{ role: "user", content: "What is the weather in Paris?" }];

// Tool calls on qwen3-vocab-tiny: random weights with Qwen3's tokenizer and chat template, whose
// planted rules make it open a call at the start of an answer (greedy) and end its turn after one.
describe("tool calls on /v1/chat/completions", () => {
  let hearth: TestHearth;
  let client: OpenAI;

  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_MODEL_DIR: testQwen3ModelDir, HEARTH_CONTEXT_SIZE: "2048" } });
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("with required, gives calls whose arguments validate against their schema, across seeds", async () => {
    for (const seed of [1, 2, 3]) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: user,
        tools,
        tool_choice: "required",
        temperature: 1,
        seed,
        max_tokens: 300,
      });
      const choice = r.choices[0]!;
      expect(choice.finish_reason, JSON.stringify(choice.message)).toBe("tool_calls");
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls?.length).toBeGreaterThanOrEqual(1);
      for (const call of choice.message.tool_calls ?? []) expectValidCall(call as never);
    }
  });

  it("with a named function, calls that one; without parallel calls, once", async () => {
    for (const seed of [7, 8, 9]) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: user,
        tools,
        tool_choice: { type: "function", function: { name: "search" } },
        parallel_tool_calls: false,
        temperature: 1,
        seed,
        max_tokens: 300,
      });
      const calls = r.choices[0]!.message.tool_calls ?? [];
      expect(r.choices[0]!.finish_reason).toBe("tool_calls");
      expect(calls).toHaveLength(1);
      expect((calls[0] as { function: { name: string } }).function.name).toBe("search");
      expectValidCall(calls[0] as never);
    }
  });

  it("streams a call as deltas that assemble to the same call as the whole answer", async () => {
    const request = {
      model: MODEL,
      messages: user,
      tools,
      tool_choice: "required" as const,
      temperature: 1,
      seed: 42,
      max_tokens: 300,
    };
    const whole = await client.chat.completions.create(request);
    const stream = await client.chat.completions.create({ ...request, stream: true });
    const calls: { id?: string; type?: string; name?: string; arguments: string }[] = [];
    let finish: string | null = null;
    let firstDeltaOfCall: unknown[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      finish = choice.finish_reason ?? finish;
      for (const d of choice.delta.tool_calls ?? []) {
        if (!calls[d.index]) {
          calls[d.index] = { id: d.id, type: d.type, name: d.function?.name, arguments: "" };
          firstDeltaOfCall = [d.id, d.type, d.function?.name];
        }
        calls[d.index]!.arguments += d.function?.arguments ?? "";
      }
    }
    expect(firstDeltaOfCall.every((v) => typeof v === "string")).toBe(true);
    expect(finish).toBe("tool_calls");
    const expected = (whole.choices[0]!.message.tool_calls ?? []).map((c) => {
      const f = (c as { function: { name: string; arguments: string } }).function;
      return { name: f.name, arguments: f.arguments };
    });
    expect(calls.map((c) => ({ name: c.name, arguments: c.arguments }))).toEqual(expected);
  });

  it("runs the SDK's tool loop: call, tool result, answer", async () => {
    // Greedy, the model opens a call at once (its planted rule); the grammar takes over after the tag.
    const first = await client.chat.completions.create({
      model: MODEL,
      messages: user,
      tools,
      temperature: 0,
      max_tokens: 300,
    });
    const message = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const call = message.tool_calls![0]! as {
      id: string;
      type: "function";
      function: { name: string; arguments: string };
    };
    expectValidCall(call);
    const history: ChatCompletionMessageParam[] = [
      ...user,
      message,
      { role: "tool", tool_call_id: call.id, content: '{"temperature": 21, "sky": "clear"}' },
    ];
    // Sampled from the whole vocabulary (top_k 0 is Hearth's extension), some seed answers in text.
    let answer: OpenAI.Chat.Completions.ChatCompletion | undefined;
    for (let seed = 0; seed < 16 && !answer; seed++) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages: history,
        tools,
        temperature: 1,
        top_p: 1,
        seed,
        max_tokens: 8,
        ...({ top_k: 0 } as object),
      });
      const { message: m } = r.choices[0]!;
      if (!m.tool_calls && (m.content ?? "").length > 0) answer = r;
    }
    expect(answer).toBeDefined();
    expect(answer!.choices[0]!.finish_reason).toBe("length");
    expect(answer!.choices[0]!.message.content).not.toContain("<tool_call>");
  });

  it("with none, offers no tools and parses no calls", async () => {
    const r = await client.chat.completions.create({
      model: MODEL,
      messages: user,
      tools,
      tool_choice: "none",
      temperature: 0,
      max_tokens: 6,
    });
    expect(r.choices[0]!.message.tool_calls).toBeUndefined();
    expect(r.choices[0]!.finish_reason).toBe("length");
    expect(typeof r.choices[0]!.message.content).toBe("string");
  });

  it("refuses bad tools, tool_choice and tool messages with a 400 naming the param", async () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${hearth.baseURL}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, messages: user, max_tokens: 4, ...body }),
      });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ tools: [{ type: "retrieval" }] }, /^tools/],
      [{ tools: [{ type: "function", function: { name: "bad name!" } }] }, /^tools/],
      [{ tools: [weather, weather] }, /^tools\[1\]/],
      [{ tools, tool_choice: "sometimes" }, /^tool_choice/],
      [{ tools, tool_choice: { type: "function", function: { name: "nope" } } }, /^tool_choice$/],
      [{ tool_choice: "required" }, /^tool_choice$/],
      [{ tools, parallel_tool_calls: "yes" }, /^parallel_tool_calls/],
      [
        { messages: [...user, { role: "tool", tool_call_id: "call_nothing", content: "42" }] },
        /^messages\[1\]\.tool_call_id$/,
      ],
      [{ messages: [...user, { role: "assistant", content: null }] }, /^messages\[1\]/],
    ];
    for (const [body, param] of cases) {
      const response = await post(body);
      const text = await response.text();
      expect(response.status, `${JSON.stringify(body)} → ${text}`).toBe(400);
      expect(JSON.parse(text).error.param, text).toMatch(param);
    }
  });
});
