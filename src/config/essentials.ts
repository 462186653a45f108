import { z } from "zod";
import { int, optionalString } from "./schemas.js";
import type { VariableSpec } from "./spec.js";

/** What a newcomer sets first: where the API listens, where data lives, which Redis and PostgreSQL. */
export const essentials = {
  PORT: {
    schema: int(0, 65535),
    default: "8080",
    description: "Port the API listens on; 0: a free one, which npm start's ready line names.",
  },
  HOST: {
    schema: z.string().min(1),
    default: "127.0.0.1",
    description: "Address the API binds to; 0.0.0.0 to accept connections from other hosts.",
  },
  HEARTH_DATA_DIR: {
    schema: z.string().min(1),
    default: "./data",
    description: "Where Hearth keeps its embedded database, uploaded files and the admin key.",
  },
  HEARTH_MODEL_DIR: {
    schema: optionalString,
    description: "Directory of base model GGUF files. Unset: <HEARTH_DATA_DIR>/models.",
  },
  DATABASE_URL: {
    schema: optionalString.pipe(z.url().optional()),
    description: "PostgreSQL URL. Unset: an embedded PGlite database under the data directory.",
  },
  REDIS_URL: {
    schema: optionalString.pipe(z.url().optional()),
    description: "Redis URL. Unset: redis://127.0.0.1:6379, which `npm start` starts if nothing answers there.",
  },
  HEARTH_ADMIN_KEY: {
    schema: optionalString.pipe(z.string().min(20).optional()),
    description: "The admin API key made on first start (20+ characters). Unset: a random one, printed once.",
  },
} satisfies Record<string, VariableSpec>;
