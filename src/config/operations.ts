import { z } from "zod";
import { bool, optionalString, parsedBy } from "./schemas.js";
import { parsePrices } from "./prices.js";
import type { VariableSpec } from "./spec.js";

/** The rest of running Hearth: logs, the demo models, usage metering, prices, the CLI for `hearth upgrade`. */
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
    description: "Usage metering (docs/usage.md): a record per request in the database. false: none are made.",
  },
  HEARTH_PRICES: {
    schema: optionalString.pipe(parsedBy(parsePrices).optional()),
    description: "Prices per model as JSON (docs/usage.md): usage reports then show costs. Unset: counts only.",
  },
  HEARTH_CLI_TARBALL: {
    schema: optionalString,
    description:
      "The `hearth` CLI tarball offered to `hearth upgrade`. Unset: the server packs its own on first request.",
  },
} satisfies Record<string, VariableSpec>;
