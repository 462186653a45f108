import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderDefaultChat, defaultChatStops } from "../../../src/workers/engine/default-chat-template.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { greedyText } from "../../helpers/oracle.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

type Chunk = Record<string, unknown> & { choices: Record<string, unknown>[] };

// The bytes of a stream as a client reads them: every frame `data: <json>` (the last of each step
// with an `id: <n>` line before, n counting up from 1), then `data: [DONE]`, every chunk with
// exactly the keys (and key order) of OpenAI's chunk objects; the request's ID in x-request-id.
describe("SSE streams from the real API", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth();
  });
  afterAll(async () => {
    await hearth?.close();
  });

  async function stream(route: string, body: object): Promise<Chunk[]> {
    const res = await fetch(`${hearth.baseURL}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body, stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const text = await res.text();
    expect(text.endsWith("\n\n")).toBe(true);
    const frames = text.slice(0, -2).split("\n\n");
    const ids: number[] = [];
    const data = frames.map((frame) => {
      const [, id, json] = /^(?:id: (\d+)\n)?data: (.*)$/s.exec(frame) ?? [];
      expect(json, frame).toBeDefined();
      if (id) ids.push(Number(id));
      return json!;
    });
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(ids.length).toBeGreaterThan(1);
    expect(frames.at(-1)).toBe("data: [DONE]");
    return data.slice(0, -1).map((json) => JSON.parse(json) as Chunk);
  }

  const keys = (value: object) => Object.keys(value);

  it("streams completions as text_completion chunks, usage on the finishing chunk and after", async () => {
    const prompts = ["The hearth ", 'A "quoted"\nprompt '];
    const chunks = await stream("/completions", {
      model: MODEL,
      prompt: prompts,
      n: 2,
      max_tokens: 30,
      temperature: 0,
      stream_options: { include_usage: true },
    });
    const [first] = chunks;
    const texts = ["", "", "", ""];
    const tokenChunks = chunks.filter((c) => c.choices[0]?.finish_reason === null);
    for (const chunk of tokenChunks) {
      expect(keys(chunk)).toEqual(["id", "object", "created", "model", "choices"]);
      expect(chunk.choices).toHaveLength(1);
      expect(keys(chunk.choices[0]!)).toEqual(["text", "index", "logprobs", "finish_reason"]);
      expect(chunk.choices[0]!.logprobs).toBeNull();
      texts[chunk.choices[0]!.index as number] += chunk.choices[0]!.text as string;
    }
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: first!.id, object: "text_completion", created: first!.created, model: MODEL });
    }
    expect(first!.id).toMatch(/^cmpl-/);
    expect(texts).toEqual([0, 0, 1, 1].map((p) => greedyText(prompts[p]!, 30)));

    const rest = chunks.slice(tokenChunks.length);
    const promptTokens = prompts.reduce((s, p) => s + Buffer.byteLength(p), 0);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: 120,
      total_tokens: promptTokens + 120,
      // Whatever earlier requests on the worker left (prompt caching): the text above is the same either way.
      prompt_tokens_details: { cached_tokens: expect.any(Number) },
    };
    expect(rest).toHaveLength(5);
    rest.slice(0, 4).forEach((chunk, i) => {
      expect(chunk.choices).toEqual([{ text: "", index: i, logprobs: null, finish_reason: "length" }]);
      expect(keys(chunk)).toEqual(["id", "object", "created", "model", "choices", ...(i === 3 ? ["usage"] : [])]);
    });
    expect(rest[3]!.usage).toEqual(usage);
    expect(keys(rest[4]!)).toEqual(["id", "object", "created", "model", "choices", "usage"]);
    expect(rest[4]).toMatchObject({ choices: [], usage });
  });

  it("streams chat as chat.completion.chunk chunks, the role in the first delta only", async () => {
    const messages = [{ role: "user" as const, content: "Tell me about the fire." }];
    const expected = cutAtStops(greedyText(renderDefaultChat(messages), 40), defaultChatStops);
    const chunks = await stream("/chat/completions", { model: MODEL, messages, max_tokens: 40, temperature: 0 });
    const [first] = chunks;
    expect(first!.id).toMatch(/^chatcmpl-/);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: first!.id,
        created: first!.created,
        model: MODEL,
        object: "chat.completion.chunk",
      });
    }
    const deltas = chunks.slice(0, -1);
    let content = "";
    deltas.forEach((chunk, i) => {
      expect(keys(chunk)).toEqual(["id", "created", "model", "object", "choices"]);
      expect(keys(chunk.choices[0]!)).toEqual(["index", "delta", "logprobs", "finish_reason"]);
      expect(chunk.choices[0]).toMatchObject({ index: 0, logprobs: null, finish_reason: null });
      const delta = chunk.choices[0]!.delta as { role?: string; content: string };
      expect(keys(delta)).toEqual(i === 0 ? ["role", "content"] : ["content"]);
      if (i === 0) expect(delta.role).toBe("assistant");
      content += delta.content;
    });
    expect(deltas.length).toBeGreaterThan(0);
    expect(content).toBe(expected);

    const last = chunks.at(-1)!;
    expect(keys(last)).toEqual(["id", "created", "model", "object", "choices", "usage"]);
    const finish = expect.stringMatching(/^(stop|length)$/);
    expect(last.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]);
    expect(last.usage).toMatchObject({ completion_tokens: expect.any(Number) });
  });
});

function cutAtStops(text: string, stops: readonly string[]): string {
  const at = Math.min(...stops.map((s) => (text.includes(s) ? text.indexOf(s) : text.length)));
  return text.slice(0, at);
}
