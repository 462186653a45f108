import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HearthChild } from "../../bench/src/child-process.js";
import { getDeployment } from "../../src/db/queries/deployments.js";
import { liveWorkers, type WorkerInfo } from "../../src/jobs/worker-registry.js";
import { writeAdapterToward, type TestAdapter } from "../helpers/adapters.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { defaultAccount } from "../helpers/management.js";
import { fileStorageDir } from "../helpers/storage-dir.js";
import { spawnWorker } from "../helpers/worker-process.js";

// Long enough that a request its worker has a free slot for never waits that long on a busy machine.
const WAIT_MS = 2_000;
// Room for a prompt longer than the prefix block (jobs/prompt-prefix.ts): hearth-tiny reads a token a byte.
const CONTEXT_SIZE = "2048";

/**
 * Placement with two worker processes: a deploy warms the adapter on one worker only, each
 * adapter's requests all run where it is warm (no worker loads another's adapter), a long
 * prompt's later requests run where its prefix is cached, and a request placed on a worker that stops taking jobs (SIGSTOP: its heartbeat
 * still says it is alive) moves to the shared queue after HEARTH_PLACEMENT_WAIT_MS and is
 * answered by the other worker.
 */
describe("placement", () => {
  let hearth: TestHearth;
  let redis: Redis;
  let dataDir: string;
  const workers: HearthChild[] = [];
  const adapters: Record<string, TestAdapter & { name: string; key: string }> = {};

  const serving = async (): Promise<Map<number, string[]>> => {
    const infos: WorkerInfo[] = await liveWorkers(redis, hearth.config.redisPrefix);
    return new Map(infos.map((w) => [w.pid, w.serving?.[0]?.adapterKeys ?? []]));
  };
  const complete = async (model: string, prompt: string, maxTokens: number) => {
    const res = await fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model, prompt, max_tokens: maxTokens, temperature: 0 }),
    });
    const body = (await res.json()) as { choices?: { text: string }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body.choices![0]!.text;
  };
  /** The sum of a metric's series whose labels match `labels`, from the API's /metrics. */
  const metric = async (name: string, labels = /.*/) => {
    const res = await fetch(`${hearth.url}/metrics`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });
    const lines = (await res.text()).split("\n").filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    return lines.filter((l) => labels.test(l)).reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
  };

  beforeAll(async () => {
    hearth = await startTestHearth({
      worker: false,
      env: { HEARTH_PLACEMENT_WAIT_MS: String(WAIT_MS), HEARTH_CONTEXT_SIZE: CONTEXT_SIZE },
    });
    redis = new Redis(hearth.config.redisUrl);
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-placement-"));
    for (let i = 0; i < 2; i++) {
      workers.push(
        spawnWorker(
          hearth,
          dataDir,
          {
            HEARTH_WORKER_ROLES: "text",
            HEARTH_SERVE_MODELS: "hearth-tiny",
            HEARTH_STORAGE_DIR: fileStorageDir(hearth.config),
            HEARTH_CONTEXT_SIZE: CONTEXT_SIZE,
          },
          `worker ${i}`,
        ),
      );
    }
    await eventually(async () => {
      for (const w of workers) if (!w.running) throw w.failure("starting");
      expect(await liveWorkers(redis, hearth.config.redisPrefix)).toHaveLength(2);
    }, 90_000);
    const me = defaultAccount(hearth);
    for (const [id, text] of [
      ["pa", "abba abba abba baba "],
      ["pb", "zig zag zig zag zog "],
    ] as const) {
      const adapter = await writeAdapterToward(path.join(dataDir, id), text, { format: "gguf" });
      const name = await me.deployFolder(id, adapter.dir);
      const key = (await getDeployment(hearth.api.database.db, "default", id))!.artifactPath!;
      adapters[id] = { ...adapter, name, key };
    }
  }, 150_000);
  afterAll(async () => {
    for (const w of workers) if (w.running) process.kill(w.pid, "SIGCONT");
    await Promise.all(workers.map((w) => w.stop()));
    redis?.disconnect();
    await hearth?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("warms each deployed adapter on one worker, and runs its requests there", async () => {
    const { pa, pb } = adapters;
    // Each deploy went to the worker with fewer adapters: one each.
    const warm = await eventually(async () => {
      const now = await serving();
      expect([...now.values()].map((keys) => keys.length).sort()).toEqual([1, 1]);
      return now;
    }, 10_000);
    const holder = (key: string) => [...warm].find(([, keys]) => keys.includes(key))?.[0];
    expect(holder(pa!.key)).toBeDefined();
    expect(holder(pb!.key)).toBeDefined();
    expect(holder(pa!.key)).not.toBe(holder(pb!.key));

    // Three at a time per adapter, within each worker's 4 slots, twice.
    for (let round = 0; round < 2; round++) {
      const asks = [];
      for (let i = 0; i < 3; i++) {
        asks.push(complete(pa!.name, "ab", 12).then((text) => expect(text).toBe(pa!.greedy("ab", 12))));
        asks.push(complete(pb!.name, "zi", 12).then((text) => expect(text).toBe(pb!.greedy("zi", 12))));
      }
      await Promise.all(asks);
    }
    // Nobody loaded the other's adapter: every request ran where its adapter was warm.
    await new Promise((r) => setTimeout(r, 2_500)); // a heartbeat
    expect(await serving()).toEqual(warm);
    expect(await metric("hearth_placements_total", /reason="(warm|assigned)"/)).toBe(12);
    expect(await metric("hearth_placement_moves_total")).toBe(0);
  });

  it("sends a long prompt's next requests to the worker whose prompt cache holds its prefix", async () => {
    // 1,286 bytes of prefix, longer than the prefix block.
    const shared = `${"the cat sat on the mat and then ".repeat(40)}again `;
    const ask = async (turn: string) => {
      const res = await fetch(`${hearth.baseURL}/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "accounts/hearth/models/hearth-tiny",
          prompt: shared + turn,
          max_tokens: 4,
          temperature: 0,
        }),
      });
      const body = (await res.json()) as {
        usage?: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
      };
      expect(res.status, JSON.stringify(body)).toBe(200);
      return body.usage!;
    };
    const placedBefore = await metric("hearth_placements_total", /reason="prefix"/);
    expect((await ask("one")).prompt_tokens_details.cached_tokens).toBe(0);
    // The worker that ran it lists its prefix key at its next heartbeat; the other lists none.
    await eventually(async () => {
      const keys = (await liveWorkers(redis, hearth.config.redisPrefix)).map((w) => w.serving?.[0]?.prefixKeys ?? []);
      expect(keys.map((k) => k.length).sort()).toEqual([0, 1]);
    }, 10_000);
    // The API reads heartbeats at most 500 ms old (placement's view): past that, it reads this one.
    await new Promise((r) => setTimeout(r, 1_000));
    // Left to the shared queue, the two idle workers would take these in turn, and the other
    // worker would evaluate the prefix whole; placed, each evaluates only its own turn.
    for (const turn of ["two", "three", "four", "five"]) {
      const usage = await ask(turn);
      expect(usage.prompt_tokens_details.cached_tokens, turn).toBeGreaterThanOrEqual(shared.length);
      expect(usage.prompt_tokens_details.cached_tokens).toBeLessThan(usage.prompt_tokens);
    }
    expect((await metric("hearth_placements_total", /reason="prefix"/)) - placedBefore).toBe(4);
  });

  it("moves a request off a worker that stopped taking jobs, within the bound, to one that serves it", async () => {
    const { pa } = adapters;
    const warm = await serving();
    const holderPid = [...warm].find(([, keys]) => keys.includes(pa!.key))![0];
    const other = workers.find((w) => w.pid !== holderPid)!;
    process.kill(holderPid, "SIGSTOP");
    try {
      // Its heartbeat still lists pa for a few seconds: placement sends the request there first.
      const started = Date.now();
      expect(await complete(pa!.name, "ba", 10)).toBe(pa!.greedy("ba", 10));
      expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS);
      expect(await metric("hearth_placement_moves_total")).toBe(1);
      await eventually(async () => expect((await serving()).get(other.pid)).toContain(pa!.key), 10_000);
    } finally {
      process.kill(holderPid, "SIGCONT");
    }
  });
});
