import { z } from "zod";
import { bool, int, optionalString } from "./schemas.js";
import type { VariableSpec } from "./spec.js";

/** Running several API and worker processes: Redis, roles, which worker serves what, and where requests go. */
export const scaling = {
  HEARTH_REDIS_CLUSTER: {
    schema: bool,
    default: "false",
    description: "REDIS_URL names one node of a Redis Cluster; Hearth connects as a cluster client.",
  },
  HEARTH_REDIS_PREFIX: {
    schema: z.string().regex(/^[A-Za-z0-9:_-]+$/),
    default: "hearth",
    description:
      "Prefix of every Redis key and channel Hearth uses; one Hearth's (one database's): a second Hearth needs its own.",
  },
  HEARTH_WORKER_ROLES: {
    schema: z
      .string()
      .transform((text) =>
        text
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.enum(["text", "image"], { message: "the roles are text and image" })).min(1)),
    default: "text,image",
    description: "What a worker serves: text (the base models), image (HEARTH_IMAGE_MODELS), or both.",
  },
  HEARTH_SERVE_MODELS: {
    schema: optionalString,
    description:
      "Comma-separated base model IDs a worker serves (file names without .gguf). Unset: all in the model directory.",
  },
  HEARTH_PLACEMENT: {
    schema: bool,
    default: "true",
    description:
      "Adapter-aware placement: an adapter's request goes to a worker that has it loaded. false: any worker.",
  },
  HEARTH_PLACEMENT_WAIT_MS: {
    schema: int(0, 60_000),
    default: "250",
    description: "The longest a placed request waits for its worker before it moves to its model's shared queue.",
  },
  HEARTH_BATCH_CONCURRENCY: {
    schema: int(1, 1024),
    default: "8",
    description:
      "Requests of one batch an API process keeps queued or running at once (docs/batch.md); more fill idle workers faster.",
  },
  HEARTH_BATCH_RUNS: {
    schema: int(0, 64),
    default: "2",
    description: "Batches one API process runs at once; 0: it runs none (other API processes run them).",
  },
  HEARTH_BATCH_LEASE_MS: {
    schema: int(1_000, 600_000),
    default: "30000",
    description:
      "How long an API process's hold on a batch lasts unless renewed; a dead one's batches are taken over after it.",
  },
  HEARTH_MODEL_CACHE_TTL_MS: {
    schema: int(0, 600_000),
    default: "5000",
    description: "How long the API reuses what a model name resolved to (changes made through Hearth apply at once).",
  },
  HEARTH_RECONCILE_INTERVAL_MS: {
    schema: int(100, 3_600_000),
    default: "15000",
    description: "How often each API process looks for deploys and undeploys whose job was lost (e.g. with Redis).",
  },
  HEARTH_RECONCILE_AFTER_MS: {
    schema: int(0, 86_400_000),
    default: "30000",
    description: "A model DEPLOYING or UNDEPLOYING this long with no job queued gets its job queued again.",
  },
} satisfies Record<string, VariableSpec>;
