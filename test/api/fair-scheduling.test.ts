import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { jobs } from "../../src/queues/jobs.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount, type Management } from "../helpers/management.js";

/**
 * Fair scheduling (docs/security.md): each request queues with the number of requests its
 * account already has in flight as its BullMQ priority, so one account's backlog does not
 * hold back another's next request. (The bench's fairness scenario measures the effect on
 * time to first token under a 500-request flood.)
 */
describe("fair scheduling between accounts", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let queue: Queue;
  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_WORKER_CONCURRENCY: "1", HEARTH_SEQUENCES_PER_CONTEXT: "1", HEARTH_QUEUE_TIMEOUT_MS: "60000" },
    });
    redis = new Redis(hearth.config.redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue(jobs.inference.queueName("hearth-tiny"), {
      connection: redis,
      prefix: hearth.config.redisPrefix,
    });
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await hearth?.close();
  });

  const complete = (who: Management) =>
    who.call("POST", "/v1/completions", { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 8, temperature: 0 });
  const waiting = () => queue.getJobCountByTypes("waiting", "prioritized");

  it("runs another account's request before the backlog of an account that flooded the queue", async () => {
    const flood = await createTestAccount(hearth, "flood");
    const calm = await createTestAccount(hearth, "calm");
    // No worker yet: the flood's six requests wait, then one of the calm account's.
    const finished: string[] = [];
    const floodRuns = Array.from({ length: 6 }, (_, i) => complete(flood).finally(() => finished.push(`flood ${i}`)));
    await eventually(async () => expect(await waiting()).toBe(6));
    const calmRun = complete(calm).finally(() => finished.push("calm"));
    await eventually(async () => expect(await waiting()).toBe(7));
    const priorities = (await queue.getJobs(["prioritized"])).map((j) => j.opts.priority).sort((a, b) => a! - b!);
    expect(priorities).toEqual([1, 1, 2, 3, 4, 5, 6]);

    await hearth.startWorker();
    const replies = await Promise.all([...floodRuns, calmRun]);
    expect(replies.map((r) => r.status)).toEqual(Array(7).fill(200));
    // One job at a time, in priority order: the flood's first, the calm account's, then the rest.
    expect(finished.indexOf("calm")).toBeLessThanOrEqual(1);
  });
});
