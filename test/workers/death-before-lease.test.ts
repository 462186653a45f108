import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobs } from "../../src/jobs/jobs.js";
import { leaseKey } from "../../src/requests/stream.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** Long, so that only the lease watch can end the request in time. */
const QUEUE_TIMEOUT_MS = 60_000;

/**
 * A worker that dies between taking a job (BullMQ moved it to active, with its lock) and
 * taking the job's lease (streamed-job.ts): a real BullMQ consumer in a process of its own
 * that SIGKILLs itself as its processor starts. Hearth's worker takes the lease right away,
 * so on a quiet machine this window is a few milliseconds; under load (CI, the chaos test)
 * a kill lands in it. The request must still end within seconds, not wait for BullMQ's
 * stalled-job check (a lock of 30 s, checked every 30 s, by a consumer of the same queue if
 * any is left) or for ever.
 */
describe("a worker that dies after taking a job, before its lease", () => {
  let hearth: TestHearth;
  let redis: Redis;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false, env: { HEARTH_QUEUE_TIMEOUT_MS: String(QUEUE_TIMEOUT_MS) } });
    redis = new Redis(hearth.config.redisUrl);
  }, 120_000);
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    redis?.disconnect();
    await hearth?.close();
  });

  /** A consumer of hearth-tiny's shared queue that dies (SIGKILL) on the first job it takes; resolves once it is gone. */
  function dyingConsumer(): Promise<void> {
    const code = `
      import { Worker } from "bullmq";
      import { Redis } from "ioredis";
      const connection = new Redis(${JSON.stringify(hearth.config.redisUrl)}, { maxRetriesPerRequest: null });
      const worker = new Worker(${JSON.stringify(jobs.inference.queueName("hearth-tiny"))}, async () => {
        process.kill(process.pid, "SIGKILL");
        await new Promise(() => {});
      }, { connection, prefix: ${JSON.stringify(hearth.config.redisPrefix)}, maxStalledCount: 0 });
      await worker.waitUntilReady();
      process.stdout.write("ready\\n");
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, stdio: "pipe" });
    children.push(child);
    return new Promise<void>((resolve, reject) => {
      child.stdout!.once("data", () => resolve());
      child.once("exit", (codeOrNull, signal) =>
        reject(new Error(`the consumer exited (${codeOrNull ?? signal}) before it was ready`)),
      );
    }).then(() => {
      child.removeAllListeners("exit");
    });
  }

  const post = (stream: boolean) =>
    fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "accounts/hearth/models/hearth-tiny", prompt: "The ", max_tokens: 8, stream }),
      // Far below the queue timeout: a request still open then hangs.
      signal: AbortSignal.timeout(20_000),
    });

  it("ends a plain request with a 503 within seconds", async () => {
    await dyingConsumer();
    const started = Date.now();
    const response = await post(false);
    const elapsed = Date.now() - started;
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBeTruthy();
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.message).toMatch(/worker .*stopped/i);
    const requestId = response.headers.get("x-request-id")!;
    expect(await redis.exists(leaseKey(hearth.config.redisPrefix, requestId))).toBe(0);
    console.log(`ended ${elapsed} ms after it was sent`);
  }, 30_000);

  it("ends a streamed request the same way (no event was sent, so a 503 too)", async () => {
    await dyingConsumer();
    const response = await post(true);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string } };
    expect(body.error.code).toBe("unavailable");
  }, 30_000);
});
