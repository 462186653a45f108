import type { RedisClient } from "../redis/connection.js";
import type { ApiKeyAuthenticator } from "../auth/api-key-authenticator.js";
import type { Session, SessionStore } from "../auth/sessions.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import type { Caller } from "../domain/caller.js";
import type { Logger } from "../logger.js";
import type { ApiMetrics } from "../metrics/api-metrics.js";
import type { InferenceClient } from "../requests/inference-client.js";
import type { Usage } from "../requests/stream.js";
import type { ProducerQueues } from "../jobs/producer-queues.js";
import type { AddonUploads } from "./services/addon-uploads.js";
import type { AccountKeys } from "./services/account-keys.js";
import type { Administration } from "./services/administration.js";
import type { UsageReports } from "./services/usage-reports.js";
import type { BatchFiles } from "./services/batch-files.js";
import type { Batches } from "./services/batches.js";
import type { Deployments } from "./services/deployments.js";
import type { ModelCatalog } from "./services/model-catalog.js";
import type { ModelDeletion } from "./services/model-deletion.js";
import type { ImageGeneration } from "./services/image-generation.js";
import type { ModelResolver } from "./services/model-resolver.js";

/** What the API is built from; main.ts wires the real ones, tests may wire their own. */
import type { AccountLimitsCache } from "./services/account-limits.js";
import type { IntakeGate } from "../limits/intake-gate.js";
import type { Admission } from "./services/admission.js";
import type { CliPackage } from "./services/cli-package.js";
import type { CredentialChecks } from "./services/credential-checks.js";
import type { TrustedProxies } from "../proxy-trust.js";

export interface AppDeps {
  config: Config;
  db: Db;
  apiKeys: ApiKeyAuthenticator;
  /** Every check of a presented API key, behind the failed-authentication limit. */
  credentials: CredentialChecks;
  /** Which proxies' X-Forwarded-* headers are believed (api/client-address.ts). */
  proxies: TrustedProxies;
  /** The web pages' sessions (auth/sessions.ts). */
  sessions: SessionStore;
  redis: RedisClient;
  inference: InferenceClient;
  /** This process's metrics (GET /metrics). */
  metrics: ApiMetrics;
  /** The BullMQ queues, for the operators' console. */
  queues: ProducerQueues;
  models: ModelResolver;
  /** Rate limits, in-flight caps and fair priorities (services/admission.ts). */
  admission: Admission;
  intake: IntakeGate;
  /** Accounts' limits and quotas as they apply. */
  accountLimits: AccountLimitsCache;
  /** The CLI tarball `hearth upgrade` installs from this server. */
  cliPackage: CliPackage;
  images: ImageGeneration;
  management: ManagementServices;
  log: Logger;
  /** True once the process is shutting down: new requests are refused (app.ts). */
  draining?: () => boolean;
}

/** The services behind the management API (models, files, deployments, keys) and the admin endpoints. */
export interface ManagementServices {
  catalog: ModelCatalog;
  uploads: AddonUploads;
  deployments: Deployments;
  deletion: ModelDeletion;
  administration: Administration;
  keys: AccountKeys;
  usage: UsageReports;
  /** The files and batches APIs (docs/batch.md). */
  files: BatchFiles;
  batches: Batches;
}

export interface AppEnv {
  Variables: {
    caller: Caller;
    /** Headers every answer to this request carries, whatever made it (the x-ratelimit-* ones). */
    answerHeaders: Record<string, string>;
    /** A generation request's leaving of its account's intake gate (middleware/intake.ts); absent on other routes. */
    leaveIntake?: () => void;
    /** What the route adds to the request's log line (request-log.ts). */
    requestNote: RequestNote;
    /** A web page's session, once looked up (null: signed out); web/web-routes.tsx. */
    session?: Session | null;
    /** The batch this request is a line of, when the batch runner makes it (batch-call.ts). */
    batchId?: string;
  };
}

/** What a route adds to its request's log line (request-log.ts; admit-generation.ts sets it for generations). */
export interface RequestNote {
  model?: string;
  usage?: Usage;
  /** Settles when the request's events have ended (a stream's last event, or its client's leaving). */
  ended?: Promise<void>;
}

/** An AbortSignal that fires when the client goes away. */
export function clientGone(request: Request): AbortController {
  const controller = new AbortController();
  if (request.signal.aborted) controller.abort();
  else request.signal.addEventListener("abort", () => controller.abort(), { once: true });
  return controller;
}
