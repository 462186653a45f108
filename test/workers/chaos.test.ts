import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { greedyText } from "../helpers/oracle.js";
import { readSse } from "../helpers/sse.js";
import { spawnWorker } from "../helpers/worker-process.js";

/** How long the chaos lasts: short in the suite, longer with `npm run chaos`. */
const SECONDS = Number(process.env.HEARTH_CHAOS_SECONDS ?? 12);
const STREAMS = 64;
const TOKENS = 120;
const KILL_EVERY_MS = 3_000;
/**
 * A request that receives nothing for this long hangs (the queue timeout is 10 s, a dead
 * worker's requests end in about 1.5 s, tokens come milliseconds apart). A slow request that
 * keeps receiving (a machine busy with the rest of the suite) is not a hang.
 */
const HANG_MS = 30_000;

type Outcome = "complete" | "clean error" | "hang" | "repeated or wrong text" | "server error";

/**
 * Chaos, bounded in time: 64 concurrent streams on hearth-tiny with two worker processes, one
 * of them SIGKILLed every few seconds and a new one started. Every request must end with its
 * whole text (the greedy oracle's) or a clean error: no hang, no repeated text, no 500.
 */
describe("chaos: workers killed and restarted under 64 concurrent streams", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let dataDir: string;
  const workers: HearthChild[] = [];
  const spawned: HearthChild[] = [];
  const spawn = () => {
    const worker = spawnWorker(hearth, dataDir, { HEARTH_WORKER_ROLES: "text" }, `worker ${spawned.length}`);
    spawned.push(worker);
    return worker;
  };

  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_QUEUE_TIMEOUT_MS: "10000", HEARTH_MAX_QUEUE_DEPTH: "1000" },
    });
    redis = new Redis(hearth.config.redisUrl);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-chaos-"));
    workers.push(spawn(), spawn());
    await eventually(async () => {
      for (const w of workers) if (!w.running) throw w.failure("starting");
      expect(await liveWorkers(redis, hearth.config.redisPrefix)).toHaveLength(2);
    }, 90_000);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(spawned.map((w) => w.stop(5_000)));
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** What went wrong with requests that did not end well, for the log. */
  const notes: string[] = [];
  async function stream(prompt: string): Promise<Outcome> {
    const started = Date.now();
    const quiet = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    const heard = () => {
      clearTimeout(idle);
      idle = setTimeout(() => quiet.abort(new Error(`nothing received for ${HANG_MS} ms`)), HANG_MS);
    };
    heard();
    let response: Response;
    try {
      response = await fetch(`${hearth.baseURL}/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "accounts/hearth/models/hearth-tiny",
          prompt,
          max_tokens: TOKENS,
          temperature: 0,
          stream: true,
        }),
        signal: quiet.signal,
      });
    } catch (error) {
      clearTimeout(idle);
      notes.push(
        `${prompt}: no response after ${Date.now() - started} ms: ${String(error)} ${String((error as Error).cause ?? "")}`,
      );
      return "hang";
    }
    if (response.status !== 200) {
      clearTimeout(idle);
      await response.body?.cancel();
      return response.status === 503 || response.status === 429 ? "clean error" : "server error";
    }
    heard();
    const { events } = await readSse(response, {
      stop: () => {
        heard();
        return false;
      },
    });
    clearTimeout(idle);
    if (events.at(-1)?.data !== "[DONE]") {
      const last = events.at(-1)?.data.slice(0, 200);
      const why = quiet.signal.aborted ? String(quiet.signal.reason) : "the connection ended";
      notes.push(
        `${prompt}: no [DONE] after ${Date.now() - started} ms (${why}), ${events.length} events, the last: ${last}`,
      );
      return "hang";
    }
    let text = "";
    let error: { code: string } | undefined;
    let finished = false;
    for (const { data } of events.slice(0, -1)) {
      const chunk = JSON.parse(data) as {
        error?: { code: string };
        choices: { text: string; finish_reason: string | null }[];
      };
      if (chunk.error) error = chunk.error;
      else {
        text += chunk.choices[0]?.text ?? "";
        if (chunk.choices[0]?.finish_reason) finished = true;
      }
    }
    const whole = greedyText(prompt, TOKENS);
    if (!whole.startsWith(text)) return "repeated or wrong text";
    if (error) return error.code === "internal" ? "server error" : "clean error";
    return finished && text === whole ? "complete" : "repeated or wrong text";
  }

  it("ends every request with its whole text or a clean error: no hang, no repeated text, no 500", async () => {
    const counts: Record<Outcome | "requests" | "kills", number> = {
      requests: 0,
      complete: 0,
      "clean error": 0,
      hang: 0,
      "repeated or wrong text": 0,
      "server error": 0,
      kills: 0,
    };
    const deadline = Date.now() + SECONDS * 1000;
    const chaos = (async () => {
      for (let i = 0; Date.now() + KILL_EVERY_MS < deadline; i++) {
        await new Promise((r) => setTimeout(r, KILL_EVERY_MS));
        const slot = i % workers.length;
        const victim = workers[slot]!;
        if (victim.running) {
          process.kill(victim.pid, "SIGKILL");
          counts.kills++;
        }
        workers[slot] = spawn();
      }
    })();
    await Promise.all(
      Array.from({ length: STREAMS }, async (_, client) => {
        for (let round = 0; Date.now() < deadline; round++) {
          counts.requests++;
          counts[await stream(`Chaos ${client}.${round} `)]++;
        }
      }),
    );
    await chaos;
    console.log(`chaos over ${SECONDS} s: ${JSON.stringify(counts)}`);
    if (notes.length > 0) console.log(notes.slice(0, 20).join("\n"));
    expect(counts.kills).toBeGreaterThan(0);
    expect(counts.complete).toBeGreaterThan(0);
    expect(counts["clean error"]).toBeGreaterThan(0);
    expect({ hang: counts.hang, repeated: counts["repeated or wrong text"], server: counts["server error"] }).toEqual({
      hang: 0,
      repeated: 0,
      server: 0,
    });
  }, 300_000);
});
