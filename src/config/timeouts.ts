import { int } from "./schemas.js";
import type { VariableSpec } from "./spec.js";

/** How long each wait may last, from a database answer to a draining process; most end in 503. */
export const timeouts = {
  HEARTH_QUEUE_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: "30000",
    description: "A request no worker has taken within this time fails with 503.",
  },
  HEARTH_FIRST_TOKEN_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: "60000",
    description: "Once a worker has started a request, the longest wait for its first token (or image step); then 503.",
  },
  HEARTH_INTER_TOKEN_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: "30000",
    description: "The longest wait between two tokens (or image steps) of a running request; then 503.",
  },
  HEARTH_BODY_TIMEOUT_MS: {
    schema: int(100, 300_000),
    default: "10000",
    description: "The longest a request's headers, then its body (uploads excepted), may take; then 408.",
  },
  HEARTH_STREAM_RETENTION_MS: {
    schema: int(1_000, 86_400_000),
    default: "300000",
    description: "How long a streamed completion's events stay in Redis after its last one, for a client to resume.",
  },
  HEARTH_DB_CONNECT_TIMEOUT_MS: {
    schema: int(100, 600_000),
    default: "5000",
    description: "PostgreSQL: the longest wait for a new connection; then the request fails with 503.",
  },
  HEARTH_DB_STATEMENT_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: "15000",
    description: "PostgreSQL: the longest a statement may run, or Hearth waits for its answer; then 503.",
  },
  HEARTH_REDIS_COMMAND_TIMEOUT_MS: {
    schema: int(100, 600_000),
    default: "5000",
    description: "The longest the API waits for Redis to answer a command; then the request fails with 503.",
  },
  HEARTH_WORKER_DRAIN_MS: {
    schema: int(0, 3_600_000),
    default: "30000",
    description: "On SIGTERM, how long a worker lets its running jobs finish before it cancels them.",
  },
  HEARTH_API_DRAIN_MS: {
    schema: int(0, 3_600_000),
    default: "30000",
    description: "On SIGTERM, how long the API lets open requests (streams included) finish before it closes them.",
  },
} satisfies Record<string, VariableSpec>;
