import { z } from "zod";
import { bool, int, optionalString, parsedBy } from "./schemas.js";
import { parsePrices } from "./prices.js";
import type { VariableSpec } from "./spec.js";

/**
 * The rest of running Hearth: logs, the demo models, usage metering and its retention, prices,
 * the CLI offered for `hearth upgrade`.
 */
export const operations = {
  HEARTH_LOG_LEVEL: {
    schema: z.enum(["debug", "info", "warn", "error"]),
    default: "info",
    description: "Least severe log level printed.",
  },
  HEARTH_BUILD_DEMO_MODELS: {
    schema: bool,
    default: "true",
    description: "Build the demo models (hearth-tiny and its example LoRA) into the model directory when absent.",
  },
  HEARTH_USAGE_METERING: {
    schema: bool,
    default: "true",
    description:
      "Usage metering (docs/usage.md): a record per request in the database. The API processes' setting; false: none.",
  },
  HEARTH_PRICES: {
    schema: optionalString.pipe(parsedBy(parsePrices).optional()),
    description: "Prices per model as JSON (docs/usage.md): usage reports then show costs. Unset: counts only.",
  },
  HEARTH_USAGE_RETENTION_DAYS: {
    schema: int(0, 36_500),
    default: "90",
    description: "Usage records older than this many days roll up into daily totals (docs/usage.md). 0: kept forever.",
  },
  HEARTH_CLI_TARBALL: {
    schema: optionalString,
    description:
      "The `hearth` CLI tarball offered to `hearth upgrade`. Unset: the server packs its own on first request.",
  },
} satisfies Record<string, VariableSpec>;
