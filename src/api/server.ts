import { randomUUID } from "node:crypto";
import os from "node:os";
import path from "node:path";
import type { Config } from "../config.js";
import { bootstrapDatabase } from "../auth/bootstrap.js";
import { openDatabase, type Database } from "../db/client.js";
import { migrateDatabase } from "../db/migrate.js";
import { scrub, type Logger } from "../logger.js";
import { createRedis, waitForRedis } from "../redis/connection.js";
import { ownPrefix } from "../redis/prefix-owner.js";
import { installationId } from "../db/queries/installation.js";
import { SessionStore } from "../auth/sessions.js";
import { VerifiedKeys } from "../auth/verified-keys.js";
import { ApiMetrics } from "../metrics/api-metrics.js";
import { inferenceMetrics } from "../metrics/inference-metrics.js";
import { usageMetrics } from "../metrics/usage-metrics.js";
import { AccountKeys } from "./services/account-keys.js";
import { Administration } from "./services/administration.js";
import { InferenceClient } from "../requests/inference-client.js";
import { ModelChanges } from "../jobs/model-changes.js";
import { ReplyHub } from "../requests/reply-hub.js";
import { createApp } from "./app.js";
import { listenHttp } from "./http-listener.js";
import { registerOperatorModels } from "./register-models.js";
import { ImageGeneration } from "./services/image-generation.js";
import { ModelResolver } from "./services/model-resolver.js";
import { openBlobStore } from "../storage/open-blob-store.js";
import { RedisQuarantineStore } from "../limits/template-quarantine-store.js";
import { TemplateSandbox } from "../templates/template-sandbox.js";
import { InFlightRequests } from "../limits/in-flight.js";
import { IntakeGate } from "../limits/intake-gate.js";
import { RateWindows } from "../limits/rate-windows.js";
import { TrustedProxies } from "../proxy-trust.js";
import { AccountLimitsCache } from "./services/account-limits.js";
import { Admission } from "./services/admission.js";
import { CredentialChecks } from "./services/credential-checks.js";
import { CliPackage } from "./services/cli-package.js";
import { LifecycleQueue } from "../jobs/lifecycle-queue.js";
import { ProducerQueues } from "../jobs/producer-queues.js";
import { Placement } from "../requests/placement.js";
import { ControlWorker } from "../control/control-worker.js";
import { Reconciler } from "../control/reconciler.js";
import { UsageMeter } from "../control/usage-meter.js";
import { UsageRollup } from "../control/usage-rollup.js";
import { UsageReports } from "./services/usage-reports.js";
import { BatchFiles } from "./services/batch-files.js";
import { Batches } from "./services/batches.js";
import { readBatchInput } from "./services/batch-input.js";
import { BatchRunner } from "../control/batch-runner.js";
import { lineCaller } from "./batch-call.js";
import { ChatTemplateCheck } from "./services/chat-template-check.js";
import { ModelCatalog } from "./services/model-catalog.js";
import { Deployments } from "./services/deployments.js";
import { AddonUploads } from "./services/addon-uploads.js";
import { RedisMutex } from "../redis/redis-mutex.js";
import { ApiKeyAuthenticator } from "../auth/api-key-authenticator.js";
import { ModelDeletion } from "./services/model-deletion.js";

export interface RunningApi {
  url: string;
  port: number;
  database: Database;
  /** The admin key, when this start created it. */
  createdAdminKey: string | undefined;
  /** The intake gate's load per account (tests see that every place was given back). */
  intake: Pick<IntakeGate, "load">;
  close(graceMs?: number): Promise<void>;
}

export interface StartApiOptions {
  /** The clock of the model and API-key caches, in milliseconds (tests move it past a TTL). */
  now?: () => number;
}

/**
 * Starts the API: database (migrated, bootstrapped), the operator's base models
 * registered, Redis producer, reply hub and model-change feed, then the HTTP server.
 */
export async function startApi(config: Config, log: Logger, options: StartApiOptions = {}): Promise<RunningApi> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    timeouts: config.dbTimeouts,
  });
  await migrateDatabase(database);
  const { createdAdminKey } = await bootstrapDatabase(database.db, {
    adminKey: config.adminKey,
    dataDir: config.dataDir,
    // The generated admin key is shown to the operator once, on purpose: not a log line (those mask keys).
    log: (message) => void process.stderr.write(`${message}\n`),
    toTerminal: process.stderr.isTTY === true,
  });
  await registerOperatorModels(database.db, config, log);

  const redis = createRedis(config, "producer");
  const subscriber = createRedis(config, "subscriber");
  await waitForRedis(redis, 10_000).catch((err: Error) => {
    // Through scrub: REDIS_URL may carry a password, and this message is printed.
    throw new Error(`${err.message} at ${scrub(config.redisUrl)}. Start Redis or set REDIS_URL.`);
  });
  // Before anything reads, writes or deletes under the prefix: is it this Hearth's?
  const prefixOwner = { id: await installationId(database.db), database: database.where };
  await ownPrefix(redis, config.redisPrefix, prefixOwner).catch(async (err: unknown) => {
    redis.disconnect();
    subscriber.disconnect();
    await database.close();
    throw err;
  });
  const hub = await ReplyHub.start(subscriber, config.redisPrefix);
  const queues = new ProducerQueues(redis, config.redisPrefix);
  const metrics = new ApiMetrics();
  const placement = config.placement.enabled ? new Placement(redis, queues, { prefix: config.redisPrefix }) : undefined;
  const inference = new InferenceClient(redis, queues, hub, {
    ...config,
    lanes: {
      ...(placement ? { placement: { placer: placement, waitMs: config.placement.waitMs } } : {}),
      ...(config.express.enabled ? { express: { waitMs: config.express.waitMs } } : {}),
    },
    observer: inferenceMetrics(metrics),
    log: log.child("inference"),
  });
  const models = new ModelResolver(database.db, { ttlMs: config.modelCacheTtlMs, now: options.now });
  const modelChanges = new ModelChanges(redis, config.redisPrefix, () => models.invalidate(), log.child("models"));
  await modelChanges.listen(subscriber);
  const apiKeys = new ApiKeyAuthenticator(database.db, { ttlMs: config.authCacheTtlMs, now: options.now });
  const storage = openBlobStore(config);
  const controlDeps = {
    db: database.db,
    storage,
    redis,
    redisPrefix: config.redisPrefix,
    prefixOwner,
    modelChanges,
    maxLoraRank: config.maxLoraRank,
    placement,
    log: log.child("lifecycle"),
  };
  const lifecycleQueue = new LifecycleQueue(queues);
  const control = await ControlWorker.start(config, controlDeps);
  const reconciler = new Reconciler(controlDeps, lifecycleQueue, config.reconcile);
  reconciler.start();
  // This process's name, as the usage log's consumer and as the runner of the batches it holds.
  const processName = `api-${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const usageMeter = config.usageMetering
    ? new UsageMeter(createRedis(config, "worker"), database.db, log.child("usage"), {
        prefix: config.redisPrefix,
        consumer: processName,
        onWritten: usageMetrics(metrics),
      })
    : undefined;
  const usageRollup =
    config.usageRetentionDays === null
      ? undefined
      : new UsageRollup(database.db, log.child("usage"), {
          retentionDays: config.usageRetentionDays,
          now: options.now,
        });
  usageRollup?.start();
  // Users' chat templates are checked in threads; the sandbox starts its threads on first use.
  const templates = new TemplateSandbox(config.templates);
  templates.quarantine.share(
    new RedisQuarantineStore(redis, config.redisPrefix, config.redisCommandTimeoutMs),
    (error) => log.warn("could not share a template's quarantine", { error: String(error) }),
  );
  const accountLimits = new AccountLimitsCache(database.db, config.limits, {
    ttlMs: config.authCacheTtlMs,
    now: options.now,
  });
  const catalog = new ModelCatalog(database.db, storage, modelChanges, new ChatTemplateCheck(templates), accountLimits);
  const deployments = new Deployments(database.db, catalog, lifecycleQueue, modelChanges, log.child("deployments"));
  // Held while an upload's quota is checked again and its file takes its key (an S3 copy of
  // up to 5 GiB at most), so a wait of a minute covers a few uploads finishing together.
  const storedBytesLock = new RedisMutex(redis, config.redisPrefix, {
    leaseMs: 30_000,
    waitMs: 60_000,
    timeoutMs: config.redisCommandTimeoutMs,
  });
  const management = {
    catalog,
    uploads: new AddonUploads(database.db, storage, catalog, config, storedBytesLock, log),
    deployments,
    deletion: new ModelDeletion(database.db, storage, catalog, deployments, modelChanges, log),
    administration: new Administration(database.db, config.limits, {
      accountChanged: (accountId) => accountLimits.forget(accountId),
    }),
    keys: new AccountKeys(database.db, { keyRevoked: (keyId) => apiKeys.forget(keyId) }),
    usage: new UsageReports(database.db, config.prices, options.now),
    files: new BatchFiles(database.db, storage, catalog, storedBytesLock, config.batch.maxFileBytes),
    batches: new Batches(database.db, () => batchRunner.nudge()),
  };
  const inFlight = new InFlightRequests(redis, config.redisPrefix, {
    staleMs: config.limits.inFlightStaleMs,
    timeoutMs: config.redisCommandTimeoutMs,
  });
  const windows = new RateWindows(redis, config.redisPrefix, config.redisCommandTimeoutMs);
  const admission = new Admission(windows, inFlight, accountLimits, config.limits, log.child("limits"));
  const images = new ImageGeneration(models, inference, redis, config);
  const intake = new IntakeGate(config.limits.intakePerAccount);
  const sessions = new SessionStore(redis, config.redisPrefix, config.web.sessionTtlMs);
  const app = createApp({
    config,
    db: database.db,
    apiKeys,
    credentials: new CredentialChecks(
      apiKeys,
      windows,
      new VerifiedKeys(redis, config.redisPrefix, config.redisCommandTimeoutMs),
      config.limits.authFailuresPerMinute,
    ),
    proxies: new TrustedProxies(config.web.trustProxy),
    sessions,
    redis,
    inference,
    queues,
    metrics,
    models,
    admission,
    intake,
    accountLimits,
    cliPackage: new CliPackage(
      { prebuilt: config.cliTarball, workDir: path.join(config.dataDir, "cli") },
      log.child("cli-package"),
    ),
    images,
    management,
    log,
    draining: () => draining,
  });

  const batchRunner = new BatchRunner(
    {
      db: database.db,
      storage,
      log: log.child("batches"),
      readInput: (text, endpoint) => readBatchInput(text, endpoint, config.batch.maxLines),
      execute: lineCaller((request, env) => app.fetch(request, env)),
    },
    {
      runnerId: processName,
      concurrency: config.batch.concurrency,
      maxBatches: config.batch.runs,
      leaseMs: config.batch.leaseMs,
    },
  );
  batchRunner.start();

  /** What close() ends after the HTTP server, in order; also what a failed listen gives back. */
  const closeServices = async () => {
    hub.close();
    inFlight.close();
    await reconciler.close();
    await control.close();
    await usageMeter?.close();
    await usageRollup?.close();
    await templates.close();
    await queues.close();
    redis.disconnect();
    subscriber.disconnect();
    await database.close();
  };

  let draining = false;
  const { server, port, url } = await listenHttp(app.fetch, config).catch(async (error: unknown) => {
    await batchRunner.close();
    await closeServices();
    throw error;
  });
  log.info("API listening", { url });

  return {
    url,
    port,
    database,
    createdAdminKey,
    intake,
    async close(graceMs = 5_000) {
      // Stop accepting: no new connection, and on the kept-alive ones a 503 that closes them
      // (app.ts); give open requests a moment, then end them; then the connections. Batches'
      // lines stop first, and their batches are given back for another process to go on.
      await batchRunner.close();
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const grace = setTimeout(() => {
        hub.close();
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }, graceMs);
      await closed;
      clearTimeout(grace);
      await closeServices();
    },
  };
}
