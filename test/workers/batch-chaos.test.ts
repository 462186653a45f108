import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { asc, eq } from "drizzle-orm";
import { Redis } from "ioredis";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { batches, batchResults } from "../../src/db/schema/batches.js";
import { usageRecords } from "../../src/db/schema/usage.js";
import { liveWorkers } from "../../src/jobs/worker-registry.js";
import { spawnApi } from "../helpers/api-process.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { spawnWorker } from "../helpers/worker-process.js";

/** How long the chaos lasts, roughly (it sizes the batch): short in the suite, longer with `npm run chaos`. */
const SECONDS = Number(process.env.HEARTH_CHAOS_SECONDS ?? 12);
const LINES = SECONDS * 40;
const KILL_EVERY_MS = 3_000;
/** Lines the batch's API process keeps in flight: more than the workers' sequences, so that some always wait. */
const CONCURRENCY = 16;
/** A short lease, so that the batch of the killed API is taken over within seconds. */
const LEASE_MS = 3_000;
const TINY = "accounts/hearth/models/hearth-tiny";

interface FileLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: { usage?: { completion_tokens: number } } } | null;
  error: { code: string; message: string } | null;
}

/**
 * Batches under chaos (docs/reliability.md, "Batches"): a few hundred short chat lines run by a
 * spawned API process on two worker processes, one worker SIGKILLed every few seconds and
 * replaced, and the batch's API process SIGKILLed once a third of the lines have results; a
 * second API process, started once the first holds the batch, takes it over when the lease
 * lapses (the test's own API runs no batches). The batch completes with exactly one result per
 * line: the output and error files name each custom_id once, request_counts add up, and the
 * results in the database are the files' lines. Lines whose worker died get 503 and are tried
 * again, so every line is answered 200.
 *
 * A line whose answer came back but whose result was not written (its runner died between the
 * two) runs again under the next runner: one result counts, but both runs used a worker and
 * both are metered (usage records of the batch that no output line names). Those are at most the
 * killed runner's lines in flight and its results not yet written (control/batch-result-writer.ts:
 * no more than three groups of HEARTH_BATCH_CONCURRENCY), far fewer than the lines that had a
 * result when it died: none of those ran again.
 */
describe("chaos: a batch survives killed workers and a killed API process", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let dataDir: string;
  const apis: { child: HearthChild; url: string }[] = [];
  const workers: HearthChild[] = [];
  const spawned: HearthChild[] = [];
  // The batch's lines count in its key's requests per minute: the spawned APIs' limit is as far
  // above a test's as the test Hearth's own.
  const apiEnv = {
    HEARTH_KEY_REQUESTS_PER_MINUTE: "1000000",
    HEARTH_BATCH_LEASE_MS: String(LEASE_MS),
    HEARTH_BATCH_CONCURRENCY: String(CONCURRENCY),
  };
  const spawn = () => {
    const worker = spawnWorker(hearth, dataDir, { HEARTH_WORKER_ROLES: "text" }, `worker ${spawned.length}`);
    spawned.push(worker);
    return worker;
  };

  beforeAll(async () => {
    hearth = await startTestHearth({ backend: "postgres", worker: false, env: { HEARTH_BATCH_RUNS: "0" } });
    redis = new Redis(hearth.config.redisUrl);
    // One data directory for the spawned processes: their files (the batch's) are each other's.
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-batch-chaos-"));
    workers.push(spawn(), spawn());
    apis.push(await spawnApi(hearth, dataDir, apiEnv));
    await eventually(async () => {
      for (const w of workers) if (!w.running) throw w.failure("starting");
      expect(await liveWorkers(redis, hearth.config.redisPrefix)).toHaveLength(2);
    }, 90_000);
  }, 150_000);
  afterAll(async () => {
    await Promise.all(spawned.map((w) => w.stop(5_000)));
    await Promise.all(apis.map((a) => a.child.stop(5_000)));
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it(
    "completes with exactly one result per line, the files equal to the results",
    async () => {
      const db = hearth.api.database.db;
      const sdk = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: hearth.apiKey, maxRetries: 0 });
      const input = Array.from({ length: LINES }, (_, i) =>
        JSON.stringify({
          custom_id: `c${i}`,
          method: "POST",
          url: "/v1/chat/completions",
          body: { model: TINY, messages: [{ role: "user", content: `Chaos line ${i}` }], max_tokens: 12 },
        }),
      ).join("\n");
      const first = sdk(apis[0]!.url);
      const file = await first.files.create({
        file: await toFile(Buffer.from(input), "chaos.jsonl"),
        purpose: "batch",
      });
      const created = await first.batches.create({
        input_file_id: file.id,
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
      });
      // The first API process holds it (the test's own runs no batches).
      const holder = await eventually(async () => {
        const [row] = await db.select().from(batches).where(eq(batches.id, created.id));
        expect(row?.runner).toBeTruthy();
        return row!.runner!;
      }, 30_000);
      const progress = async () => {
        const [row] = await db.select().from(batches).where(eq(batches.id, created.id));
        return row!;
      };
      let kills = 0;
      let apiKilledAt: number | undefined;
      let ended = false;
      // Every few seconds, while both workers serve, one is killed and replaced, the two in turn:
      // one always serves (on a busy machine a worker takes longer than that to start).
      const chaos = (async () => {
        for (let slot = 0; !ended; ) {
          await new Promise((r) => setTimeout(r, KILL_EVERY_MS));
          const live = new Set((await liveWorkers(redis, hearth.config.redisPrefix)).map((w) => w.pid));
          if (ended || !workers.every((w) => live.has(w.pid))) continue;
          process.kill(workers[slot]!.pid, "SIGKILL");
          kills++;
          workers[slot] = spawn();
          slot = (slot + 1) % workers.length;
        }
      })();
      // The second API process, to take the batch over once the first is killed and its lease lapses.
      const second = spawnApi(hearth, dataDir, apiEnv).then((api) => {
        apis.push(api);
        return sdk(api.url);
      });
      const apiChaos = (async () => {
        while (!ended && apiKilledAt === undefined) {
          const row = await progress();
          if (row.completed + row.failed >= LINES / 3) {
            expect(row.runner).toBe(holder);
            process.kill(apis[0]!.child.pid, "SIGKILL");
            apiKilledAt = row.completed + row.failed;
          } else await new Promise((r) => setTimeout(r, 100));
        }
      })();
      let batch: OpenAI.Batch;
      try {
        const taker = await second;
        batch = await eventually(async () => {
          const b = await taker.batches.retrieve(created.id);
          expect(b.status).toBe("completed");
          return b;
        }, LINES * 500);
      } finally {
        ended = true;
        await Promise.all([chaos, apiChaos]);
      }
      expect(apiKilledAt, "the batch's first API process died mid-batch").toBeLessThan(LINES);
      expect(kills).toBeGreaterThan(0);

      // The files, read from the API process that took over: each custom_id exactly once.
      const taker = await second;
      const read = async (id: string | null | undefined): Promise<FileLine[]> =>
        id
          ? (await (await taker.files.content(id)).text())
              .trim()
              .split("\n")
              .map((l) => JSON.parse(l) as FileLine)
          : [];
      const output = await read(batch.output_file_id);
      const errors = await read(batch.error_file_id);
      const all = [...output, ...errors];
      const ids = all.map((l) => l.custom_id).sort();
      expect(new Set(ids).size, "no custom_id twice").toBe(ids.length);
      expect(ids).toEqual(Array.from({ length: LINES }, (_, i) => `c${i}`).sort());
      expect(batch.request_counts).toEqual({ total: LINES, completed: output.length, failed: errors.length });

      // The results in the database are the files' lines.
      const results = await db
        .select()
        .from(batchResults)
        .where(eq(batchResults.batchId, created.id))
        .orderBy(asc(batchResults.line));
      expect(results).toHaveLength(LINES);
      const byCustomId = new Map(all.map((l) => [l.custom_id, l]));
      for (const r of results) {
        const line = byCustomId.get(r.customId);
        expect(line?.response, r.customId).toMatchObject({ status_code: r.statusCode, request_id: r.requestId });
      }
      const statuses: Record<number, number> = {};
      for (const r of results) statuses[r.statusCode ?? 0] = (statuses[r.statusCode ?? 0] ?? 0) + 1;

      // Usage: each answered line metered as it ran; lines that ran twice metered twice. (The killed
      // API's meter may have read records it never wrote: another takes them over after 30 s.)
      const records = await eventually(async () => {
        const rows = await db.select().from(usageRecords).where(eq(usageRecords.batchId, created.id));
        const byId = new Map(rows.map((r) => [r.requestId, r]));
        expect(output.filter((l) => !byId.has(l.response!.request_id)).map((l) => l.custom_id)).toEqual([]);
        return rows;
      }, 60_000);
      const answered = new Set(output.map((l) => l.response!.request_id));
      const outcomes: Record<string, number> = {};
      for (const r of records) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
      const ranTwice = records.filter((r) => r.outcome === "finished" && !answered.has(r.requestId));
      console.log(
        `batch chaos: ${LINES} lines, ${kills} workers killed, the API killed at ${apiKilledAt} results; ` +
          `results ${JSON.stringify(statuses)}; usage records ${JSON.stringify(outcomes)}, ` +
          `${ranTwice.length} finished runs whose result was not the one kept (ran twice)`,
      );
      for (const line of output) {
        const record = records.find((r) => r.requestId === line.response!.request_id)!;
        expect(record.outcome).toBe("finished");
        expect(record.completionTokens).toBe(line.response!.body.usage?.completion_tokens);
      }
      expect(ranTwice.length, "only the killed runner's unwritten lines ran twice").toBeLessThanOrEqual(
        4 * CONCURRENCY,
      );
      expect(4 * CONCURRENCY).toBeLessThan(apiKilledAt!);
      // Every 503 (a dead worker, a queue timeout) was tried again: every line was answered.
      expect(statuses).toEqual({ 200: LINES });
    },
    LINES * 500 + 120_000,
  );
});
