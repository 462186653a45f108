import { EventEmitter } from "node:events";
import os from "node:os";
import { randomUUID } from "node:crypto";
import type { Worker } from "bullmq";
import type { RedisClient } from "../redis/connection.js";
import type { Config } from "../config.js";
import { AppError } from "../errors.js";
import { discoverBaseModels } from "../models/base/base-model-catalog.js";
import { subscribeAdapterEvents, type AdapterEvent } from "../jobs/adapter-events.js";
import { RedisQuarantineStore } from "../limits/template-quarantine-store.js";
import { createRedis, queueConnection } from "../redis/connection.js";
import { EventBatcher } from "../requests/event-batcher.js";
import { jobs, type ImagePayload, type InferencePayload } from "../jobs/jobs.js";
import { promptPrefixKey } from "../jobs/prompt-prefix.js";
import { subscribeCancels } from "../requests/stream.js";
import type { ImageBackend } from "../images/image-backend.js";
import { openImageBackend } from "../images/open-image-backend.js";
import { runImageJob } from "./image-handler.js";
import {
  endMalformedJob,
  runStreamedJob,
  type JobFinished as StreamedJobFinished,
  type StreamedJobDeps,
} from "./streamed-job.js";
import { retireWorker, type WorkerInfo } from "../jobs/worker-registry.js";
import type { BlobStore } from "../storage/blob-store.js";
import { openBlobStore } from "../storage/open-blob-store.js";
import { adapterFile } from "./adapter-file.js";
import { ArtifactCache } from "./artifact-cache.js";
import { WorkerMetrics } from "../metrics/worker-metrics.js";
import { Cancellations } from "./cancellations.js";
import { watchDecodes } from "./decode-watch.js";
import { WorkerHeartbeat } from "./worker-heartbeat.js";
import { consumeJobs } from "../jobs/job-consumer.js";
import type { JobHandlers } from "../jobs/job-handlers.js";
import type { Engine } from "./engine/engine.js";
import { adapterKeyOf, runInference, type InferenceOutcome } from "./inference-handler.js";
import { ServedModel, type ServedModelStats, type ServingEvent } from "./served-model.js";
import type { Logger } from "../logger.js";
import { withTimeout } from "../process/with-timeout.js";

/** How long a closing worker waits past its grace period for BullMQ and Redis. */
const CLOSE_MARGIN_MS = 1_000;

/** "job-finished" of an inference job (image jobs report their image count as the outcome). */
export type JobFinished = StreamedJobFinished<InferenceOutcome>;

interface Served {
  model: ServedModel;
  /** Its base model's shared queue, and this worker's own queue of it (where placement sends the adapters it has). */
  consumers: Worker[];
  connection: RedisClient;
}

interface ServedImages {
  backend: ImageBackend;
  consumer: Worker;
  connection: RedisClient;
}

/**
 * A worker process's work: load each base model once, consume its inference
 * queue, run each request on the base model or on one of its LoRA adapters,
 * publish tokens on the reply channel, honour cancels, follow adapter deploys
 * and undeploys, report liveness.
 */
export class HearthWorker {
  readonly id = `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  /**
   * For tests and metrics: "job-started" ({requestId}) and "job-finished" (JobFinished) around every job, and each
   * ServingEvent under its type ("adapter-loaded", "adapter-evicted", "model-recycled",
   * "model-disposed").
   */
  readonly events = new EventEmitter();
  private readonly served = new Map<string, Served>();
  private readonly images = new Map<string, ServedImages>();
  private readonly cancellations = new Cancellations();
  private readonly startedAt = new Date().toISOString();
  private readonly metrics = new WorkerMetrics(this.id);
  private readonly store: BlobStore;
  private readonly artifacts: ArtifactCache;
  private readonly heartbeat: WorkerHeartbeat;
  /** The jobs' events, sent several together. */
  private readonly sender: EventBatcher;
  private closing = false;

  private constructor(
    private readonly config: Config,
    /** The language-model engine; a worker with the image role only has none. */
    private readonly engine: Engine | undefined,
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
    private readonly log: Logger,
  ) {
    this.store = openBlobStore(config);
    this.artifacts = new ArtifactCache(this.store, config.artifactCache.dir, config.artifactCache.maxBytes);
    this.heartbeat = new WorkerHeartbeat(publisher, config.redisPrefix, this.metrics, () => this.snapshot(), log);
    this.sender = new EventBatcher(publisher);
  }

  static async start(config: Config, engine: Engine | undefined, log: Logger): Promise<HearthWorker> {
    const worker = new HearthWorker(
      config,
      engine,
      createRedis(config, "publisher"),
      createRedis(config, "subscriber"),
      log,
    );
    await worker.begin();
    return worker;
  }

  get models(): string[] {
    return [...this.served.keys()];
  }

  /** How a base model is being served: its model object generation and adapter contexts. */
  stats(baseModelId: string): ServedModelStats | undefined {
    return this.served.get(baseModelId)?.model.stats();
  }

  private get jobDeps(): StreamedJobDeps {
    return {
      workerId: this.id,
      publisher: this.publisher,
      sender: this.sender,
      prefix: this.config.redisPrefix,
      cancellations: this.cancellations,
      events: this.events,
      log: this.log,
    };
  }

  private async begin() {
    await subscribeCancels(this.subscriber, this.config.redisPrefix, (id) => this.cancellations.cancel(id));
    if (this.config.worker.roles.includes("text")) await this.beginText();
    if (this.config.worker.roles.includes("image")) await this.beginImages();
    await this.heartbeat.start();
  }

  /** The image role: one consumer per image model, one image at a time (rendering takes the CPU or the GPU). */
  private async beginImages() {
    for (const spec of this.config.images.models) {
      const backend = openImageBackend(spec.backend, this.config);
      const connection = queueConnection(this.publisher);
      const consumer = consumeJobs("images", jobs.image.queueName(spec.id), this.imageHandlers, {
        connection,
        prefix: this.config.redisPrefix,
        concurrency: 1,
        log: this.log,
        onMalformed: (job) => endMalformedJob(this.jobDeps, job),
      });
      this.images.set(spec.id, { backend, consumer, connection });
      await consumer.waitUntilReady();
      this.log.info("serving image model", { model: spec.id, backend: backend.description });
    }
  }

  private async beginText() {
    const engine = this.engine;
    if (!engine) throw new Error("A worker with the text role needs the language-model engine.");
    engine.shareTemplateQuarantine(
      new RedisQuarantineStore(this.publisher, this.config.redisPrefix, this.config.redisCommandTimeoutMs),
      (error) => this.log.warn("could not share a template's quarantine", { error: String(error) }),
    );
    const found = await discoverBaseModels(this.config.modelDir, this.config.worker.serveModels, this.log);
    if (found.length === 0) {
      throw new Error(
        `No base model to serve in ${this.config.modelDir}; run \`npm run make-models\` or add a GGUF file.`,
      );
    }
    await subscribeAdapterEvents(this.subscriber, this.config.redisPrefix, (event) => this.onAdapterEvent(event));
    const { threads, expressSequences } = this.config.worker;
    for (const base of found) {
      const model = await ServedModel.start({
        ...this.config.worker,
        engine,
        base,
        adapterPath: (key) => adapterFile(this.store, key, this.artifacts),
        onDecode: watchDecodes(base.id, threads, this.metrics, this.log),
        onPromptCache: ({ lookup, reused, evicted, heldBytes }) => {
          if (lookup) this.metrics.promptCacheLookups.labels(base.id).inc();
          if (reused > 0) this.metrics.promptCacheHits.labels(base.id).inc();
          this.metrics.promptCacheTokens.labels(base.id).inc(reused);
          this.metrics.promptCacheEvicted.labels(base.id).inc(evicted);
          this.metrics.promptCacheBytes.labels(base.id).inc(heldBytes);
        },
        log: this.log,
        onEvent: (event: ServingEvent) => {
          if (event.type === "adapter-loaded")
            this.metrics.adapterLoad.labels(event.baseModelId).observe(event.ms / 1000);
          this.events.emit(event.type, event);
        },
      });
      const connection = queueConnection(this.publisher);
      // The shared queue, this worker's own, and the express lane (as many at once as the express context has sequences).
      const lanes: [string, number][] = [
        [jobs.inference.queueName(base.id), this.config.worker.concurrency],
        [jobs.inference.queueName(base.id, this.id), this.config.worker.concurrency],
      ];
      if (expressSequences > 0) lanes.push([jobs.inference.expressQueueName(base.id), expressSequences]);
      const consumers = lanes.map(([queueName, concurrency]) =>
        consumeJobs("inference", queueName, this.handlers, {
          connection,
          prefix: this.config.redisPrefix,
          concurrency,
          log: this.log,
          onMalformed: (job) => endMalformedJob(this.jobDeps, job),
        }),
      );
      this.served.set(base.id, { model, consumers, connection });
      // Set up before serving: BullMQ reports a set-up that fails after close where nothing listens.
      await Promise.all(consumers.map((c) => c.waitUntilReady()));
      this.log.info("serving model", { model: base.id, contextSize: model.contextSize });
    }
  }

  /** A deploy preloads the adapter (best effort); an undeploy frees it once its requests end. */
  private onAdapterEvent(event: AdapterEvent) {
    const served = this.served.get(event.baseModelId);
    if (!served || this.closing) return;
    if (event.type === "deployed") {
      if (event.workerId !== undefined && event.workerId !== this.id) return;
      served.model.preload(event.adapterKey).catch((err: unknown) =>
        this.log.warn("could not preload a deployed adapter", {
          model: event.model,
          adapter: event.adapterKey,
          error: (err as Error).message,
        }),
      );
    } else if (!event.stillDeployed) {
      served.model.forget(event.adapterKey);
    }
  }

  /** What this worker serves, for its heartbeat (worker-heartbeat.ts). */
  private snapshot(): WorkerInfo {
    return {
      id: this.id,
      pid: process.pid,
      host: os.hostname(),
      models: this.models,
      roles: [...this.config.worker.roles],
      ...(this.engine ? { backend: this.engine.backend } : {}),
      imageModels: [...this.images].map(([id, s]) => ({ id, backend: s.backend.description })),
      startedAt: this.startedAt,
      beatAt: new Date().toISOString(),
      serving: [...this.served.values()].map((s) => {
        const stats = s.model.stats();
        return {
          model: s.model.id,
          adapters: stats.adapters.length,
          adapterKeys: stats.adapters,
          prefixKeys: stats.prefixes,
          requests: stats.requests,
          freeSequences: stats.freeSequences,
          slots: this.config.worker.concurrency,
        };
      }),
    };
  }

  private readonly handlers: JobHandlers<"inference"> = {
    inference: (payload) => this.infer(payload),
  };

  private readonly imageHandlers: JobHandlers<"images"> = {
    image: (payload) => this.image(payload),
  };

  private infer(payload: InferencePayload): Promise<InferenceOutcome | undefined> {
    return runStreamedJob(this.jobDeps, payload, async (signal, emit) => {
      // Inside the job, so even this (a job on the wrong queue) ends with an error event.
      const served = this.served.get(payload.model.baseModelId);
      if (!served) throw new Error(`this worker does not serve ${payload.model.baseModelId}`);
      const lease = await served.model.lease(adapterKeyOf(payload));
      // Noted as it starts, so that heartbeats list it while its prefill runs: a request that
      // shares its prefix and comes as it ends goes here (one that fails leaves a stale key: a miss).
      served.model.ran(promptPrefixKey(payload));
      try {
        return await runInference(payload, lease, signal, emit);
      } finally {
        lease.release();
      }
    });
  }

  private image(payload: ImagePayload): Promise<number | undefined> {
    return runStreamedJob(this.jobDeps, payload, (signal, emit) => {
      const served = this.images.get(payload.model.baseModelId);
      if (!served) throw new Error(`this worker does not serve the image model ${payload.model.baseModelId}`);
      return runImageJob(payload, served.backend, this.publisher, this.config.redisPrefix, signal, emit);
    });
  }

  /** Stops taking jobs, lets running ones finish (cancelling them after `graceMs`), then releases everything. */
  async close(graceMs = 10_000): Promise<void> {
    this.heartbeat.stop();
    this.closing = true;
    const consumers = [
      ...[...this.served.values()].flatMap((s) => s.consumers),
      ...[...this.images.values()].map((s) => s.consumer),
    ];
    const grace = setTimeout(() => this.cancellations.cancelAll(shuttingDown()), graceMs);
    // With Redis gone, BullMQ's close (and any command) would wait for it forever: a moment
    // after the grace, when cancelled jobs have ended, stop waiting and drop the connections.
    const closed = Promise.all(
      consumers.map((c) =>
        c
          .close()
          .catch((err: unknown) => this.log.warn("queue consumer did not close cleanly", { error: String(err) })),
      ),
    );
    const gone = await withTimeout(closed, graceMs + CLOSE_MARGIN_MS).then(
      () => false,
      () => true,
    );
    clearTimeout(grace);
    // Past the grace, connections are dropped; one already gone has nothing to drop.
    if (gone) for (const c of consumers) void c.disconnect().catch(() => {});
    else
      await withTimeout(retireWorker(this.publisher, this.config.redisPrefix, this.id), CLOSE_MARGIN_MS).catch(
        () => {},
      );
    for (const s of this.served.values()) {
      await s.model.close();
      s.connection.disconnect();
    }
    this.served.clear();
    for (const s of this.images.values()) s.connection.disconnect();
    this.images.clear();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}

const shuttingDown = () =>
  new AppError("unavailable", "The worker stopped before the answer was complete (it is shutting down); please retry.");
