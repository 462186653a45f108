import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_DEMO_REF } from "../../../src/models/factory/hearth-demo.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { readSse, textOf } from "../../helpers/sse.js";
import { testDemoModelDir } from "../../helpers/test-models.js";
import { demoGreedyChat, demoGreedyText } from "../../helpers/word-oracle.js";

/**
 * The README's first examples, on hearth-demo served by Hearth: the completion and the streamed
 * chat answer exactly what the word oracle predicts (the README shows that text).
 */
describe("hearth-demo through the API", () => {
  let hearth: TestHearth;
  const post = (route: string, body: unknown) =>
    fetch(`${hearth.baseURL}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_MODEL_DIR: testDemoModelDir } });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("is listed as a base model", async () => {
    const res = await fetch(`${hearth.baseURL}/models`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });
    const body = (await res.json()) as { data: { id: string }[] };
    expect(body.data.map((m) => m.id)).toContain(HEARTH_DEMO_REF);
  });

  it("describes itself on its page and in the management API, in its GGUF's own words", async () => {
    const res = await fetch(`${hearth.url}/v1/accounts/hearth/models/hearth-demo`, {
      headers: { authorization: `Bearer ${hearth.apiKey}` },
    });
    const body = (await res.json()) as { description: string };
    expect(res.status).toBe(200);
    expect(body.description).toMatch(/^A word 4-gram language model .*not a neural network trained on language\.$/);
  });

  it("completes the README's prompt as the oracle does", async () => {
    const res = await post("/completions", {
      model: HEARTH_DEMO_REF,
      prompt: "The fire",
      max_tokens: 32,
      temperature: 0,
    });
    const body = (await res.json()) as { choices: { text: string }[] };
    expect(res.status).toBe(200);
    expect(body.choices[0]!.text).toBe(demoGreedyText("The fire", 32));
  });

  it("answers the README's streamed chat as the oracle does", async () => {
    const res = await post("/chat/completions", {
      model: HEARTH_DEMO_REF,
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 32,
      temperature: 0,
      stream: true,
    });
    expect(res.status).toBe(200);
    const { events } = await readSse(res);
    expect(textOf(events)).toBe(demoGreedyChat("Hello", 32));
  });
});
