import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type Config } from "../../src/config.js";
import type { AppError } from "../../src/errors.js";
import { createLogger } from "../../src/logger.js";
import { createBigramOracle } from "../helpers/bigram-oracle.js";
import { demoTables } from "../../src/models/factory/demo-models.js";
import { writeGgufLora } from "../../src/models/formats/gguf-lora.js";
import { publishAdapterEvent } from "../../src/jobs/adapter-events.js";
import { createRedis, waitForRedis } from "../../src/redis/connection.js";
import { InferenceClient, type InferenceRequest } from "../../src/requests/inference-client.js";
import { ProducerQueues } from "../../src/jobs/producer-queues.js";
import { ReplyHub } from "../../src/requests/reply-hub.js";
import { FileBlobStore } from "../../src/storage/file-blob-store.js";
import { storageKeys } from "../../src/storage/keys.js";
import type { Engine, EngineContext, EngineModel } from "../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../src/workers/engine/llama-engine.js";
import type { ServingEvent } from "../../src/workers/served-model.js";
import { HearthWorker, type JobFinished } from "../../src/workers/worker.js";
import { greedyText } from "../helpers/oracle.js";
import { deleteRedisKeys } from "../helpers/redis.js";
import { testModelDir } from "../helpers/test-models.js";
import { deferred } from "../helpers/fake-engine.js";

const PROMPT = "Kindling ";
const TOKENS = 24;
/** A second adapter: the demo LoRA at twice its strength, which says something else. */
const DOUBLE_ALPHA = 2;

/** Real llama.cpp, with a switch that holds generations at their start (to keep them in flight). */
function gatedEngine(inner: Engine) {
  const gate = { hold: undefined as Promise<void> | undefined, started: 0 };
  const wrapContext = (context: EngineContext): EngineContext => ({
    get contextSize() {
      return context.contextSize;
    },
    get sequences() {
      return context.sequences;
    },
    async generate(request, signal, onText) {
      gate.started++;
      await gate.hold;
      return context.generate(request, signal, onText);
    },
    dispose: () => context.dispose(),
  });
  const engine: Engine = {
    backend: inner.backend,
    async loadModel(options) {
      const model = await inner.loadModel(options);
      const wrapped: EngineModel = Object.create(model);
      wrapped.createContext = async (o) => wrapContext(await model.createContext(o));
      return wrapped;
    },
    shareTemplateQuarantine: (store, onError) => inner.shareTemplateQuarantine(store, onError),
    close: () => inner.close(),
  };
  return { engine, gate };
}

interface Rig {
  config: Config;
  worker: HearthWorker;
  client: InferenceClient;
  events: ServingEvent[];
  close(): Promise<void>;
}

describe("multi-LoRA serving with real llama.cpp", () => {
  let llama: LlamaEngine;
  let gated: ReturnType<typeof gatedEngine>;
  let storageDir: string;
  let store: FileBlobStore;
  let keyA: string; // the demo adapter
  let keyB: string; // the demo adapter at double strength
  let keyA2: string; // the demo adapter's bytes under a second key
  const rigs: Rig[] = [];
  let main: Rig;

  beforeAll(async () => {
    storageDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-multi-lora-"));
    store = new FileBlobStore(storageDir);
    const demo = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf", "adapter.gguf");
    const { lora } = demoTables();
    const doubled = path.join(storageDir, "doubled.gguf");
    await writeGgufLora(doubled, {
      architecture: "llama",
      name: "hearth-tiny-lora-x2",
      alpha: lora.alpha * DOUBLE_ALPHA,
      weights: [{ tensor: "output.weight", pair: lora.pair }],
    });
    keyA = await storeArtifact(demo);
    keyB = await storeArtifact(doubled);
    keyA2 = storageKeys.adapterArtifact(createHash("sha256").update("a second key").digest("hex"));
    await store.put(keyA2, createReadStream(demo));
    llama = await LlamaEngine.create();
    gated = gatedEngine(llama);
    main = await startRig({});
  });

  afterAll(async () => {
    for (const rig of rigs) await rig.close();
    await llama?.close();
    await fs.rm(storageDir, { recursive: true, force: true });
  });

  async function storeArtifact(file: string): Promise<string> {
    const sha = createHash("sha256")
      .update(await fs.readFile(file))
      .digest("hex");
    const key = storageKeys.adapterArtifact(sha);
    await store.put(key, createReadStream(file));
    return key;
  }

  async function startRig(env: Record<string, string>): Promise<Rig> {
    const config = loadConfig({
      HEARTH_MODEL_DIR: testModelDir,
      HEARTH_STORAGE_DIR: storageDir,
      HEARTH_DATA_DIR: storageDir,
      HEARTH_BUILD_DEMO_MODELS: "false",
      HEARTH_REDIS_PREFIX: `hearth-test-${randomBytes(4).toString("hex")}`,
      HEARTH_LOG_LEVEL: process.env.HEARTH_TEST_LOG_LEVEL ?? "error",
      HEARTH_WORKER_THREADS: "1",
      HEARTH_CONTEXT_SIZE: "128",
      HEARTH_SEQUENCES_PER_CONTEXT: "2",
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      ...env,
    });
    const log = createLogger(config.logLevel, "test");
    const worker = await HearthWorker.start(config, gated.engine, log);
    const events: ServingEvent[] = [];
    for (const type of ["adapter-loaded", "adapter-evicted", "model-recycled", "model-disposed"]) {
      worker.events.on(type, (e: ServingEvent) => events.push(e));
    }
    const subscriber = createRedis(config, "subscriber");
    const producer = createRedis(config, "producer");
    // As the API does: a producer fails fast, so it must be connected before the first request.
    await waitForRedis(producer, 10_000);
    const hub = await ReplyHub.start(subscriber, config.redisPrefix);
    const queues = new ProducerQueues(producer, config.redisPrefix);
    const client = new InferenceClient(producer, queues, hub, {
      ...config,
      queueTimeoutMs: 20_000,
      maxQueueDepth: 100,
    });
    const rig: Rig = {
      config,
      worker,
      client,
      events,
      async close() {
        await queues.close();
        hub.close();
        subscriber.disconnect();
        producer.disconnect();
        await worker.close(1_000);
        await deleteRedisKeys(config.redisUrl, `${config.redisPrefix}:*`);
      },
    };
    rigs.push(rig);
    return rig;
  }

  function completion(adapterKey: string | undefined, prompt = PROMPT): InferenceRequest {
    return {
      kind: "completion",
      model: {
        name: adapterKey ? "accounts/test/models/some-lora" : "accounts/hearth/models/hearth-tiny",
        baseModelId: "hearth-tiny",
        ...(adapterKey ? { adapter: { key: adapterKey } } : {}),
      },
      prompts: [prompt],
      n: 1,
      sampling: { maxTokens: TOKENS, temperature: 0, stop: [] },
    };
  }

  async function run(rig: Rig, request: InferenceRequest): Promise<string> {
    let text = "";
    for await (const event of rig.client.run(request, new AbortController().signal)) {
      if (event.type === "token") text += event.text;
    }
    return text;
  }

  const doubledText = () => {
    const { base, shape, lora } = demoTables();
    const oracle = createBigramOracle({
      table: base,
      shape,
      lora: { pair: lora.pair, alpha: lora.alpha * DOUBLE_ALPHA },
    });
    return oracle.greedy(PROMPT, TOKENS).text;
  };

  it("answers with the adapter when the request names one, and with the base model otherwise", async () => {
    const [adapted, plain] = await Promise.all([run(main, completion(keyA)), run(main, completion(undefined))]);
    expect(adapted).toBe(greedyText(PROMPT, TOKENS, { adapter: true }));
    expect(plain).toBe(greedyText(PROMPT, TOKENS));
    expect(adapted).not.toBe(plain);
  });

  it("serves different adapters concurrently, each with its own output", async () => {
    const keys = [keyA, keyB, keyA, keyB, undefined];
    const texts = await Promise.all(keys.map((key) => run(main, completion(key))));
    const expected = {
      a: greedyText(PROMPT, TOKENS, { adapter: true }),
      b: doubledText(),
      base: greedyText(PROMPT, TOKENS),
    };
    expect(new Set(Object.values(expected)).size).toBe(3);
    expect(texts).toEqual([expected.a, expected.b, expected.a, expected.b, expected.base]);
    // One load per adapter, however many requests asked at once.
    const loaded = main.events.flatMap((e) => (e.type === "adapter-loaded" ? [e.adapterKey] : []));
    expect(loaded.sort()).toEqual([keyA, keyB].sort());
  });

  it("ends a request whose adapter file is missing: the client gets a request ID, the worker's log says why", async () => {
    const missing = storageKeys.adapterArtifact("0".repeat(64));
    const finished = new Promise<JobFinished>((resolve) => main.worker.events.once("job-finished", resolve));
    const failure = (await run(main, completion(missing)).catch((e: unknown) => e)) as AppError;
    const { requestId, error } = await finished;
    expect(failure).toMatchObject({ code: "internal" });
    expect(failure.message).toBe(
      `The worker failed to run this request; the operator's logs have what happened, under request ID ${requestId}.`,
    );
    // The storage key and the hint are the operator's to read, not the client's.
    expect(error).toMatchObject({ code: "internal", message: expect.stringContaining("is HEARTH_STORAGE_DIR shared") });
    expect(error!.message).toContain(missing);
    // The worker goes on serving.
    expect(await run(main, completion(keyA))).toBe(greedyText(PROMPT, TOKENS, { adapter: true }));
  });

  it("refuses embeddings for an adapter", async () => {
    const request: InferenceRequest = {
      kind: "embedding",
      model: { name: "accounts/test/models/some-lora", baseModelId: "hearth-tiny", adapter: { key: keyA } },
      inputs: ["hello"],
    };
    await expect(run(main, request)).rejects.toMatchObject({ code: "invalid_request", param: "model" });
  });

  it("preloads a deployed adapter and frees an undeployed one after its in-flight work ends", async () => {
    const { gate } = gated;
    const held = deferred();
    gate.hold = held.promise;
    const started = gate.started;
    const inFlight = run(main, completion(keyA));
    const publisher = createRedis(main.config, "worker");
    try {
      await until(() => gate.started > started);
      expect(main.worker.stats("hearth-tiny")!.adapterLeases[keyA]).toBe(1);
      const prefix = main.config.redisPrefix;
      await publishAdapterEvent(publisher, prefix, {
        type: "undeployed",
        model: "accounts/test/models/a",
        baseModelId: "hearth-tiny",
        adapterKey: keyA,
        stillDeployed: false,
      });
      // Events are handled in order: once the deploy after it has preloaded, the undeploy has been seen.
      const loaded = new Promise<void>((resolve) =>
        main.worker.events.on("adapter-loaded", (e: ServingEvent) => {
          if (e.type === "adapter-loaded" && e.adapterKey === keyA2) resolve();
        }),
      );
      await publishAdapterEvent(publisher, prefix, {
        type: "deployed",
        model: "accounts/test/models/a2",
        baseModelId: "hearth-tiny",
        adapterKey: keyA2,
      });
      await loaded;
      // Still in flight: still loaded.
      expect(main.worker.stats("hearth-tiny")!.adapters).toContain(keyA);
      expect(main.events.some((e) => e.type === "adapter-evicted" && e.adapterKey === keyA)).toBe(false);
    } finally {
      publisher.disconnect();
      gate.hold = undefined;
      held.resolve();
    }
    expect(await inFlight).toBe(greedyText(PROMPT, TOKENS, { adapter: true }));
    await until(() => main.events.some((e) => e.type === "adapter-evicted" && e.adapterKey === keyA));
    const evicted = main.events.find((e) => e.type === "adapter-evicted" && e.adapterKey === keyA);
    expect(evicted).toMatchObject({ reason: "undeployed" });
    expect(main.worker.stats("hearth-tiny")!.adapters).not.toContain(keyA);
    expect(main.worker.stats("hearth-tiny")!.adapters).toContain(keyA2);
  });

  it("recycles its model object every two adapter loads and keeps answering correctly", async () => {
    const rig = await startRig({ HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL: "2", HEARTH_WORKER_MAX_ADAPTERS: "1" });
    const expected = new Map<string | undefined, string>([
      [keyA, greedyText(PROMPT, TOKENS, { adapter: true })],
      [keyA2, greedyText(PROMPT, TOKENS, { adapter: true })],
      [keyB, doubledText()],
      [undefined, greedyText(PROMPT, TOKENS)],
    ]);
    for (const round of [
      [keyA, keyB],
      [keyA2, undefined, keyA],
      [keyB, keyA2, keyB, undefined],
    ]) {
      const texts = await Promise.all(round.map((key) => run(rig, completion(key))));
      expect(texts).toEqual(round.map((key) => expected.get(key)));
    }
    const recycled = rig.events.filter((e) => e.type === "model-recycled");
    // How many times depends on how the rounds' requests interleave (a busy machine runs them
    // one after another more often); each recycling comes at the limit of two loads.
    expect(recycled.length).toBeGreaterThanOrEqual(1);
    expect(recycled.map((e) => e.type === "model-recycled" && e.adapterLoads)).toEqual(recycled.map(() => 2));
    await until(() => rig.events.filter((e) => e.type === "model-disposed").length === recycled.length);
    const stats = rig.worker.stats("hearth-tiny")!;
    expect(stats.generation).toBe(recycled.length);
    expect(stats.adapterLoads).toBeLessThanOrEqual(2);
    expect(stats.draining).toEqual([]);
  });
});

async function until(condition: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
