import type { Config } from "../config.js";
import { A1111Backend } from "./backends/a1111-backend.js";
import { SketchBackend } from "./backends/sketch-backend.js";
import type { ImageBackend } from "./image-backend.js";
import type { ImageBackendSpec } from "../config/image-models.js";

/** The backend an image model is configured with (HEARTH_IMAGE_MODELS). */
export function openImageBackend(spec: ImageBackendSpec, config: Config): ImageBackend {
  switch (spec.kind) {
    case "sketch":
      return new SketchBackend({ maxInputPixels: config.images.maxInputPixels });
    case "a1111":
      return new A1111Backend({ url: spec.url, timeoutMs: config.images.backendTimeoutMs });
  }
}
