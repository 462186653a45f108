import { parseImageModels } from "./image-models.js";
import { int, parsedBy } from "./schemas.js";
import type { VariableSpec } from "./spec.js";

/** Image generation: which image models are served, by which backend, and how big an upload may be. */
export const images = {
  HEARTH_IMAGE_MODELS: {
    schema: parsedBy((text) => {
      try {
        return parseImageModels(text);
      } catch (error) {
        return { problem: (error as Error).message };
      }
    }),
    default: "hearth-sketch=sketch",
    description: "Image models served, as id=backend pairs: sketch (built in) or a1111:<url>. Empty: none.",
  },
  HEARTH_MAX_IMAGE_BYTES: {
    schema: int(1024, 1 << 30),
    default: String(10 * 1024 * 1024),
    description: "Largest init or control image file an image request may upload; larger ones get 413.",
  },
  HEARTH_MAX_IMAGE_PIXELS: {
    schema: int(64 * 64, 1 << 28),
    default: String(4096 * 4096),
    description: "Most pixels (width × height) an uploaded image may declare; more get 413 before decoding.",
  },
  HEARTH_IMAGE_BACKEND_TIMEOUT_MS: {
    schema: int(1_000, 3_600_000),
    default: "300000",
    description: "How long a worker waits for an a1111 image server to answer one request; then 503.",
  },
} satisfies Record<string, VariableSpec>;
