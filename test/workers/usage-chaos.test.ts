import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { usageRecords } from "../../src/db/schema/usage.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { spawnApi } from "../helpers/api-process.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { lastEventId, readSse, type SseEvent } from "../helpers/sse.js";
import { tokensReceived } from "../helpers/usage.js";
import { spawnWorker } from "../helpers/worker-process.js";

/** How long the chaos lasts: short in the suite, longer with `npm run chaos`. */
const SECONDS = Number(process.env.HEARTH_CHAOS_SECONDS ?? 12);
const CLIENTS = 16;
const TOKENS = 150;
const KILL_EVERY_MS = 3_000;
/** A client that receives nothing for this long gives up (and the test fails: nothing should hang). */
const HANG_MS = 30_000;

/** What one request gave its client: the tokens it received (by their logprobs) and its prompt. */
interface Received {
  prompt: string;
  tokens: number;
  /** Which API processes it went through: the spawned one ("other"), the test's ("own"), or the first then the second. */
  path: string;
  /** The usage chunk of a stream that finished. */
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/**
 * Usage metering under chaos (docs/usage.md): streams on two API processes, one of them
 * SIGKILLed and started again half-way, and two worker processes, one SIGKILLed every few
 * seconds and replaced. A client whose API died resumes its stream on the other. Once it is
 * over, the records in the database count, request by request and in total, exactly the
 * tokens the clients received: the workers' records, the API's for requests whose worker
 * died, none twice and none lost with the killed API's meter.
 */
describe("chaos: usage records equal what the clients received", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let dataDir: string;
  let other: { child: HearthChild; url: string } | undefined;
  const workers: HearthChild[] = [];
  const spawned: HearthChild[] = [];
  const env = { HEARTH_QUEUE_TIMEOUT_MS: "10000", HEARTH_MAX_QUEUE_DEPTH: "1000" };
  const spawn = () => {
    const worker = spawnWorker(hearth, dataDir, { HEARTH_WORKER_ROLES: "text" }, `worker ${spawned.length}`);
    spawned.push(worker);
    return worker;
  };

  beforeAll(async () => {
    hearth = await startTestHearth({ backend: "postgres", worker: false, env });
    redis = new Redis(hearth.config.redisUrl);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-usage-chaos-"));
    workers.push(spawn(), spawn());
    other = await spawnApi(hearth, dataDir, env);
    await eventually(async () => {
      for (const w of workers) if (!w.running) throw w.failure("starting");
      expect(await liveWorkers(redis, hearth.config.redisPrefix)).toHaveLength(2);
    }, 90_000);
  }, 150_000);
  afterAll(async () => {
    await Promise.all(spawned.map((w) => w.stop(5_000)));
    await other?.child.stop(5_000);
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  const received = new Map<string, Received>();
  const notes: string[] = [];
  const headers = () => ({ authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" });

  /** One streamed completion, on `url`; resumed on the test's own API process if its connection breaks. */
  async function stream(url: string, prompt: string): Promise<void> {
    const via = url === hearth.url ? "own" : "other";
    const quiet = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    const heard = () => {
      clearTimeout(idle);
      idle = setTimeout(() => quiet.abort(new Error(`nothing received for ${HANG_MS} ms`)), HANG_MS);
    };
    heard();
    const listening = () => {
      heard();
      return false;
    };
    const body = {
      model: "accounts/hearth/models/hearth-tiny",
      prompt,
      max_tokens: TOKENS,
      temperature: 0,
      logprobs: 0,
      stream: true,
      stream_options: { include_usage: true },
    };
    try {
      let response: Response;
      try {
        response = await fetch(`${url}/v1/completions`, {
          method: "POST",
          headers: headers(),
          body: JSON.stringify(body),
          signal: quiet.signal,
        });
      } catch {
        return; // that API process is down: nothing was asked of it
      }
      const requestId = response.headers.get("x-request-id");
      if (response.status !== 200) {
        await response.body?.cancel();
        if (requestId) received.set(requestId, { prompt, tokens: 0, path: via });
        return;
      }
      const events: SseEvent[] = [];
      await readSse(response, { events, stop: listening });
      let path = via;
      if (events.at(-1)?.data !== "[DONE]") {
        path = `${via} then own`;
        // Its API process died: the rest comes from the other one, after what arrived.
        const resumed = await fetch(`${hearth.url}/v1/streams/${requestId}`, {
          headers: { ...headers(), "last-event-id": String(lastEventId(events) ?? 0) },
          signal: quiet.signal,
        });
        if (resumed.status === 200) await readSse(resumed, { events, stop: listening });
        else notes.push(`${requestId}: resumed with ${resumed.status}: ${await resumed.text()}`);
      }
      if (events.at(-1)?.data !== "[DONE]") notes.push(`${requestId}: no [DONE] after ${events.length} events`);
      received.set(requestId!, { prompt, path, ...tokensReceived(events) });
    } finally {
      clearTimeout(idle);
    }
  }

  it("counts, request by request, the tokens each client received: none lost, none twice", async () => {
    let kills = 0;
    const deadline = Date.now() + SECONDS * 1000;
    const chaos = (async () => {
      let apiKilled = false;
      for (let i = 0; Date.now() + KILL_EVERY_MS < deadline; i++) {
        await new Promise((r) => setTimeout(r, KILL_EVERY_MS));
        const slot = i % workers.length;
        if (workers[slot]!.running) {
          process.kill(workers[slot]!.pid, "SIGKILL");
          kills++;
        }
        workers[slot] = spawn();
        if (!apiKilled && Date.now() > deadline - (SECONDS * 1000) / 2) {
          // Apart from the worker's death: a request whose worker and API process die at once
          // has nobody left to meter it (docs/usage.md, "Cut short").
          await new Promise((r) => setTimeout(r, KILL_EVERY_MS / 2));
          apiKilled = true;
          const dead = other!;
          other = undefined;
          process.kill(dead.child.pid, "SIGKILL");
          other = await spawnApi(hearth, dataDir, env);
        }
      }
      expect(apiKilled).toBe(true);
    })();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let round = 0; Date.now() < deadline; round++) {
          const url = client % 2 === 0 && other ? other.url : hearth.url;
          await stream(url, `Usage chaos ${client}.${round} `);
        }
      }),
    );
    await chaos;
    if (notes.length > 0) console.log(notes.slice(0, 20).join("\n"));

    const db = hearth.api.database.db;
    const sent = [...received.values()].reduce((sum, r) => sum + r.tokens, 0);
    const records = await eventually(async () => {
      const rows = await db.select().from(usageRecords).where(eq(usageRecords.accountId, "default"));
      const byId = new Map(rows.map((r) => [r.requestId, r]));
      const missing = [...received]
        .filter(([id, r]) => r.tokens > 0 && !byId.has(id))
        .map(([id, r]) => `${id} (${r.path}, ${r.tokens} tokens)`);
      expect(missing).toEqual([]);
      return byId;
    }, 60_000);
    const outcomes: Record<string, number> = {};
    for (const r of records.values()) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    console.log(
      `usage chaos over ${SECONDS} s: ${received.size} requests, ${kills} workers killed, ${sent} tokens received, records ${JSON.stringify(outcomes)}`,
    );
    expect(kills).toBeGreaterThan(0);
    expect(outcomes.failed, "no request was cut short by a worker's death").toBeGreaterThan(0);

    // Request by request: its record counts the tokens its client received, and its prompt's bytes.
    const wrong: string[] = [];
    for (const [id, got] of received) {
      const record = records.get(id);
      const counted = record?.completionTokens ?? 0;
      if (counted !== got.tokens || (got.usage && got.usage.completion_tokens !== counted)) {
        wrong.push(`${id}: received ${got.tokens} (usage ${got.usage?.completion_tokens}), recorded ${counted}`);
      }
      if (record && counted > 0 && record.promptTokens !== Buffer.byteLength(got.prompt)) {
        wrong.push(`${id}: a prompt of ${Buffer.byteLength(got.prompt)} bytes recorded as ${record.promptTokens}`);
      }
    }
    expect(wrong).toEqual([]);
    // A request whose API process died before its client saw an answer (so it has no ID to resume
    // with) is a failure, counted as far as it reached that API process.
    const unseen = [...records.values()].filter((r) => !received.has(r.requestId));
    expect(unseen.filter((r) => r.outcome !== "failed")).toEqual([]);
    const recorded = [...records.values()]
      .filter((r) => received.has(r.requestId))
      .reduce((sum, r) => sum + r.completionTokens, 0);
    expect(recorded).toBe(sent);
  }, 300_000);
});
