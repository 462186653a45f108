import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";

/**
 * Output a worker cuts short (here: it shuts down with a grace shorter than the generation)
 * is never reported as complete: a stream ends with an error event, a plain request is a 503.
 */
describe("answers cut short by the worker", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false });
  });
  afterAll(() => hearth?.close());

  const request = (stream: boolean) =>
    fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "accounts/hearth/models/hearth-tiny", prompt: "The ", max_tokens: 400, stream }),
    });

  it("ends a stream with an error event, not a finish_reason", async () => {
    const worker = await hearth.startWorker();
    const res = await request(true);
    const reader = res.body!.getReader();
    await reader.read(); // the first token is out: the worker is generating
    await worker.close(20);
    let text = "";
    for (let part = await reader.read(); !part.done; part = await reader.read())
      text += new TextDecoder().decode(part.value);
    const events = text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse(events.at(-2)!.slice(6))).toMatchObject({ error: { code: "unavailable" } });
    expect(text).not.toMatch(/"finish_reason":"(stop|length)"/);
  });

  it("answers a plain request with a 503", async () => {
    const worker = await hearth.startWorker();
    const started = new Promise((resolve) => worker.events.once("job-started", resolve));
    const pending = request(false);
    await started;
    await worker.close(20);
    const res = await pending;
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /before the answer was complete/,
    );
  });
});
