import { int } from "./schemas.js";
import type { VariableSpec } from "./spec.js";

/**
 * Limits and fairness: what one account, key or request may take, and how accounts share the
 * workers. Per-account limits are defaults an admin may override per account; 0 for a rate: no limit.
 */
export const limits = {
  HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: {
    schema: int(0, 100_000_000),
    default: "1200",
    description: "Requests per minute one account may make (every /v1 request). 0: no limit.",
  },
  HEARTH_RATE_LIMIT_TOKENS_PER_MINUTE: {
    schema: int(0, 2_000_000_000),
    default: "1000000",
    description: "Tokens (prompt and completion) per minute one account may generate with. 0: no limit.",
  },
  HEARTH_KEY_REQUESTS_PER_MINUTE: {
    schema: int(0, 100_000_000),
    default: "600",
    description: "Requests per minute one API key may make, within its account's. 0: no limit.",
  },
  HEARTH_ACCOUNT_MAX_IN_FLIGHT: {
    schema: int(1, 1_000_000),
    default: "64",
    description: "Generation requests one account may have queued or running at once; more get 429.",
  },
  HEARTH_IN_FLIGHT_STALE_MS: {
    schema: int(1_000, 3_600_000),
    default: "30000",
    description:
      "How long an in-flight request counts without its API process confirming it (a dead API's stop counting).",
  },
  HEARTH_INTAKE_PER_ACCOUNT: {
    schema: int(1, 100_000),
    default: "8",
    description: "Generation requests of one account an API process takes in at once; the others wait their turn.",
  },
  HEARTH_EXPRESS_WAIT_MS: {
    schema: int(0, 60_000),
    default: "250",
    description: "The longest a request waits in the express lane before it moves to its model's shared queue.",
  },
  HEARTH_MAX_QUEUE_DEPTH: {
    schema: int(1, 1_000_000),
    default: "256",
    description: "Waiting jobs per base model beyond which requests fail with 429.",
  },
  HEARTH_ACCOUNT_MAX_MODELS: {
    schema: int(1, 1_000_000_000),
    default: "100",
    description: "Models (adapters) one account may have.",
  },
  HEARTH_ACCOUNT_MAX_STORED_BYTES: {
    schema: int(1, Number.MAX_SAFE_INTEGER),
    default: String(50 * 1024 ** 3),
    description: "Bytes of uploaded files one account may store (50 GiB); an upload past it gets 413.",
  },
  HEARTH_MAX_BODY_BYTES: {
    schema: int(1024, 1 << 30),
    default: "4194304",
    description: "Largest JSON request body accepted; larger ones get 413.",
  },
  HEARTH_MAX_UPLOAD_BYTES: {
    schema: int(1024, 2 ** 45),
    default: "2147483648",
    description: "Largest adapter file one upload may store; larger ones get 413.",
  },
  HEARTH_MAX_BATCH_FILE_BYTES: {
    schema: int(1024, 2 ** 40),
    default: String(200 * 1024 ** 2),
    description: "Largest batch input file one upload may store (200 MiB, as OpenAI's); larger ones get 413.",
  },
  HEARTH_MAX_BATCH_LINES: {
    schema: int(1, 10_000_000),
    default: "50000",
    description: "Most requests one batch may hold; a longer input file fails the batch at validation.",
  },
  HEARTH_MAX_LORA_RANK: {
    schema: int(1, 4096),
    default: "64",
    description: "Highest LoRA rank an uploaded adapter may have.",
  },
} satisfies Record<string, VariableSpec>;
