import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../../bench/src/child-process.js";
import type { JobFinished } from "../../../src/workers/streamed-job.js";
import type { InferenceOutcome } from "../../../src/workers/inference-handler.js";
import { spawnApi } from "../../helpers/api-process.js";
import { eventually } from "../../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount } from "../../helpers/management.js";
import { greedyText } from "../../helpers/oracle.js";
import { lastEventId, readSse, textOf, type SseEvent } from "../../helpers/sse.js";

const MODEL = "accounts/hearth/models/hearth-tiny";
// Long enough (about two seconds here) to be cut off, dropped and resumed mid-way.
const MAX_TOKENS = 2000;

// Streams resume with GET /v1/streams/<x-request-id> and Last-Event-ID, on any API process,
// with nothing lost and nothing twice; a stream nobody reads any more stops (docs/reliability.md).
describe("resumable streams", () => {
  let hearth: TestHearth;
  let dataDir: string;
  let secondApi: HearthChild | undefined;
  const finished = new Map<string, { at: number; outcome: InferenceOutcome | undefined }>();

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-resume-"));
    hearth = await startTestHearth({ backend: "postgres", env: { HEARTH_CONTEXT_SIZE: "2048" } });
    hearth.worker!.events.on("job-finished", (e: JobFinished<InferenceOutcome>) =>
      finished.set(e.requestId, { at: Date.now(), outcome: e.outcome }),
    );
  }, 120_000);
  afterAll(async () => {
    await secondApi?.stop(5_000);
    await hearth?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const start = (url: string, prompt: string) =>
    fetch(`${url}/v1/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, prompt, max_tokens: MAX_TOKENS, temperature: 0, stream: true }),
    });
  const resume = (url: string, requestId: string, after: number | string, apiKey = hearth.apiKey) =>
    fetch(`${url}/v1/streams/${requestId}`, {
      headers: { authorization: `Bearer ${apiKey}`, "last-event-id": String(after) },
    });
  const stopped = (requestId: string) =>
    eventually(async () => {
      const job = finished.get(requestId);
      if (!job) throw new Error(`job ${requestId} still runs`);
      return job;
    }, 10_000);
  const ids = (events: SseEvent[]) => events.flatMap((e) => (e.id === undefined ? [] : [e.id]));

  it("a client that dropped resumes after Last-Event-ID: the text is an uninterrupted run's, no gap, no repeat", async () => {
    const response = await start(hearth.url, "The hearth ");
    const requestId = response.headers.get("x-request-id")!;
    const before = await readSse(response, { stop: (read) => read.length >= 20 });
    expect(before.ended).toBe(false);
    const after = lastEventId(before.events);

    const rest = await readSse(await resume(hearth.url, requestId, after));
    expect(rest.ended).toBe(true);
    expect(rest.events.at(-1)!.data).toBe("[DONE]");
    const all = [...ids(before.events), ...ids(rest.events)];
    expect(all).toEqual(all.map((_, i) => i + 1));
    expect(textOf(before.events) + textOf(rest.events)).toBe(greedyText("The hearth ", MAX_TOKENS));
    expect((await stopped(requestId)).outcome?.finishReasons).toEqual(["length"]);
  }, 60_000);

  it("stops a stream nobody resumes within about a second; resuming it later gives what was sent, then the error", async () => {
    const response = await start(hearth.url, "Left alone ");
    const requestId = response.headers.get("x-request-id")!;
    const before = await readSse(response, { stop: (read) => read.length >= 5 });
    const leftAt = Date.now();
    const job = await stopped(requestId);
    console.log(`the job stopped ${job.at - leftAt} ms after its client left`);
    expect(job.outcome?.finishReasons).toEqual(["cancelled"]);
    expect(job.at - leftAt).toBeLessThan(2_000);

    const rest = await readSse(await resume(hearth.url, requestId, lastEventId(before.events)));
    const error = JSON.parse(rest.events.at(-2)!.data) as { error: { code: string; message: string } };
    expect(error.error).toMatchObject({ code: "unavailable", message: expect.stringMatching(/client went away/) });
    expect(() => textOf(rest.events)).toThrow();
    const text = textOf(before.events) + textOf(rest.events.slice(0, -2));
    expect(greedyText("Left alone ", MAX_TOKENS).startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(MAX_TOKENS);
  }, 60_000);

  it("only the key's own account may resume a stream; an unknown ID is a 404 and a bad Last-Event-ID a 400", async () => {
    const response = await start(hearth.url, "Mine ");
    const requestId = response.headers.get("x-request-id")!;
    await readSse(response);
    const other = await createTestAccount(hearth, "resume-other");
    const refused = await resume(hearth.url, requestId, 0, other.apiKey);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ error: { code: "not_found", param: "request_id" } });
    expect((await resume(hearth.url, "00000000-0000-4000-8000-000000000000", 0)).status).toBe(404);
    const bad = await resume(hearth.url, requestId, "abc");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: "Last-Event-ID" } });
    // Without Last-Event-ID: the whole stream again.
    const again = await fetch(`${hearth.url}/v1/streams/${requestId}`, {
      headers: { authorization: `Bearer ${hearth.apiKey}` },
    });
    expect(textOf((await readSse(again)).events)).toBe(greedyText("Mine ", MAX_TOKENS));
  }, 60_000);

  it("an API process killed mid-stream: a stream resumed on another API process is whole, one left alone stops within about a second", async () => {
    const api = await spawnApi(hearth, dataDir);
    secondApi = api.child;
    const kept = await start(api.url, "Kept ");
    const left = await start(api.url, "Left ");
    const keptId = kept.headers.get("x-request-id")!;
    const leftId = left.headers.get("x-request-id")!;
    const keptEvents: SseEvent[] = [];
    const leftEvents: SseEvent[] = [];
    const keptRead = readSse(kept, { events: keptEvents });
    const leftRead = readSse(left, { events: leftEvents });
    await eventually(async () => expect(Math.min(keptEvents.length, leftEvents.length)).toBeGreaterThan(5));
    process.kill(api.child.pid, "SIGKILL");
    const killedAt = Date.now();
    expect((await keptRead).ended).toBe(true);
    expect((await leftRead).ended).toBe(true);

    const rest = await readSse(await resume(hearth.url, keptId, lastEventId(keptEvents)));
    expect(textOf(keptEvents) + textOf(rest.events)).toBe(greedyText("Kept ", MAX_TOKENS));
    expect((await stopped(keptId)).outcome?.finishReasons).toEqual(["length"]);

    const job = await stopped(leftId);
    console.log(`the orphaned job stopped ${job.at - killedAt} ms after its API process was killed`);
    expect(job.outcome?.finishReasons).toEqual(["cancelled"]);
    expect(job.at - killedAt).toBeLessThan(2_000);
  }, 120_000);
});
