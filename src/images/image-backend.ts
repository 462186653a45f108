/**
 * The one interface image generation runs behind: the embedded hearth-sketch renderer, or an
 * HTTP diffusion server speaking the AUTOMATIC1111 web API. Workers call it; the API never does.
 */

/** What to generate, without the images a request brings. */
export type ImageParams = Omit<ImageRequest, "init" | "control">;

export interface ImageRequest {
  prompt: string;
  negativePrompt?: string;
  width: number;
  height: number;
  cfgScale: number;
  steps: number;
  /** The seed of the first sample (sample i uses seed + i); never 0 here: the API draws one for "random". */
  seed: number;
  samples: number;
  sampler?: string;
  /** Image-to-image: the start image and how far to move from it (0 keeps it, 1 ignores it). */
  init?: { image: Buffer; strength: number };
  /** Control-net: the structure image, the preprocessor and how strongly it conditions the result. */
  control?: { image: Buffer; name: ControlNetName; scale: number };
}

export const CONTROL_NET_NAMES = ["canny"] as const;
export type ControlNetName = (typeof CONTROL_NET_NAMES)[number];

export interface GeneratedImage {
  /** PNG bytes. */
  png: Buffer;
  seed: number;
  finishReason: "SUCCESS";
}

export interface GenerateOptions {
  /** Progress over the whole request: `step` of `steps` (all samples together). */
  onProgress?: (step: number, steps: number) => void;
  /** Aborts the generation: between steps for the sketch, with an interrupt for a server. */
  signal?: AbortSignal;
}

export interface ImageBackend {
  /** What it is, for logs and the worker's heartbeat ("sketch", "a1111 http://gpu:7860"). */
  readonly description: string;
  generate(request: ImageRequest, options?: GenerateOptions): Promise<GeneratedImage[]>;
}
