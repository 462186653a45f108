import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installationId } from "../../src/db/queries/installation.js";
import { jobs } from "../../src/jobs/jobs.js";
import { announceWorker, retireWorker } from "../../src/jobs/worker-registry.js";
import { claimPrefix, prefixOwnerKey } from "../../src/redis/prefix-owner.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { deleteRedisKeys } from "../helpers/redis.js";
import {
  createTestPostgresDatabase,
  testDatabaseBackends,
  type TestPostgresDatabase,
} from "../helpers/test-databases.js";

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const newPrefix = () => `hearth-test-${crypto.randomBytes(4).toString("hex")}`;

describe("claimPrefix", () => {
  const prefix = newPrefix();
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl);
  });
  afterAll(async () => {
    redis?.disconnect();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("gives a free prefix to the first claimer, and answers the others with it", async () => {
    const a = { id: "a", database: "PGlite in /a" };
    const b = { id: "b", database: "postgres://hearth:***@db/b" };
    // Together: one wins, and every claim answers with the winner.
    const answers = await Promise.all([a, b, a, b].map((owner) => claimPrefix(redis, prefix, owner)));
    expect(new Set(answers.map((owner) => owner.id)).size).toBe(1);
    const winner = answers[0]!;
    expect([a, b]).toContainEqual(winner);
    expect(await claimPrefix(redis, prefix, winner.id === "a" ? b : a)).toEqual(winner);
  });

  it("takes a value Hearth did not write for another owner's", async () => {
    await redis.set(prefixOwnerKey(prefix), "something else");
    expect(await claimPrefix(redis, prefix, { id: "a", database: "x" })).toEqual({
      id: "something else",
      database: "not recorded",
    });
  });
});

/**
 * Two Hearths, each with its own database, on one Redis prefix: the second refuses to start,
 * saying whose prefix it is and what to do, and leaves the first's queues as they were. Any
 * number of processes on one database share the prefix, started together or one after another.
 */
describe.each(testDatabaseBackends)("two Hearths on one Redis prefix (%s)", (backend) => {
  const prefix = newPrefix();
  /** A worker of the first Hearth's, with its own queue of a model and a job waiting on it. */
  const worker = "w1";
  const workerQueue = jobs.inference.queueName("hearth-tiny", worker);
  let redis: Redis;
  let queue: Queue;
  let first: TestHearth;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue(workerQueue, { connection: redis, prefix });
    await queue.add("inference", { from: "the first Hearth" });
    // The worker is alive while the first Hearth starts, so the first's own sweep of gone
    // workers' queues keeps its queue. An entry already expired marks when that sweep has read
    // the live workers: reading them removes the expired ones (worker-registry.ts).
    await announceWorker(redis, prefix, workerInfo(worker), 3_600_000);
    await redis.zadd(`${prefix}:{workers}`, 1, "expired");
    first = await startTestHearth({
      backend,
      worker: false,
      env: { HEARTH_REDIS_PREFIX: prefix, HEARTH_RECONCILE_INTERVAL_MS: "3600000" },
    });
    await eventually(async () => expect(await redis.zscore(`${prefix}:{workers}`, "expired")).toBeNull());
    // Then the worker stops: its queue is what a second Hearth's sweep would take for an orphan.
    await retireWorker(redis, prefix, worker);
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await queue?.close();
    redis?.disconnect();
    await first?.close();
  });

  /** Another database of this backend, dropped or removed after the tests. */
  const otherDatabase = async (): Promise<{ env: Record<string, string>; where: string }> => {
    if (backend === "postgres") {
      const pg: TestPostgresDatabase = await createTestPostgresDatabase();
      cleanups.push(() => pg.drop());
      return { env: { DATABASE_URL: pg.url }, where: pg.url };
    }
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-other-"));
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
    return { env: { HEARTH_DATA_DIR: dir }, where: `PGlite in ${path.join(dir, "db")}` };
  };

  it("refuses a Hearth with another database, naming the prefix and both databases", async () => {
    const other = await otherDatabase();
    const refused = await startTestHearth({
      worker: false,
      env: { ...other.env, HEARTH_REDIS_PREFIX: prefix },
    }).then(
      () => undefined,
      (err: unknown) => (err as Error).message,
    );
    expect(refused).toContain(`Redis prefix "${prefix}" belongs to another Hearth`);
    expect(refused).toContain(`whose database is ${first.api.database.where}`);
    expect(refused).toContain(`this Hearth's database is ${other.where}`);
    expect(refused).toContain("set HEARTH_REDIS_PREFIX");

    // The prefix is still the first's, and so is its gone worker's queue, job and all.
    const owner = JSON.parse((await redis.get(prefixOwnerKey(prefix)))!) as { id: string };
    expect(owner.id).toBe(await installationId(first.api.database.db));
    expect(await redis.exists(`${prefix}:${workerQueue}:meta`)).toBe(1);
    expect((await queue.getWaiting()).map((job) => job.data)).toEqual([{ from: "the first Hearth" }]);
  });

  it("starts again on its own database and prefix", async () => {
    await first.restartApi();
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  });

  // Several processes on one database: PGlite is one process's own, so PostgreSQL only (defined, not skipped, there).
  if (backend === "postgres") {
    it("starts API processes of one database together, on a new prefix", async () => {
      const other = await otherDatabase();
      const env = { ...other.env, HEARTH_REDIS_PREFIX: newPrefix() };
      const replicas = await Promise.all([1, 2, 3].map(() => startTestHearth({ worker: false, env })));
      cleanups.push(async () => {
        for (const replica of replicas) await replica.close();
      });
      const ids = await Promise.all(replicas.map((r) => installationId(r.api.database.db)));
      expect(new Set(ids).size).toBe(1);
      for (const replica of replicas) expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
    });

    it("starts another API process beside the first, on its database", async () => {
      const replica = await startTestHearth({
        worker: false,
        env: { DATABASE_URL: first.config.databaseUrl!, HEARTH_REDIS_PREFIX: prefix, HEARTH_ADMIN_KEY: first.apiKey },
      });
      // Not replica.close(): that removes every key under the prefix, the first's too.
      cleanups.push(async () => {
        await replica.api.close();
        await fs.rm(replica.config.dataDir, { recursive: true, force: true });
      });
      expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
    });
  }
});

function workerInfo(id: string) {
  return {
    id,
    pid: 1,
    host: "test",
    models: ["hearth-tiny"],
    roles: ["text"],
    imageModels: [],
    startedAt: new Date().toISOString(),
  };
}
