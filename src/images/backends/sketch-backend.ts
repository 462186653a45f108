import type { GenerateOptions, GeneratedImage, ImageBackend, ImageRequest } from "../image-backend.js";
import { encodeImage, renderSketch } from "../sketch/render-sketch.js";

/** hearth-sketch behind the image backend interface: samples one after another, PNG-encoded by sharp. */
export class SketchBackend implements ImageBackend {
  readonly description = "sketch (embedded, procedural)";

  constructor(private readonly limits: { maxInputPixels: number }) {}

  async generate(request: ImageRequest, options: GenerateOptions = {}): Promise<GeneratedImage[]> {
    const images: GeneratedImage[] = [];
    for (let sample = 0; sample < request.samples; sample++) {
      const seed = request.seed + sample;
      const raw = await renderSketch(
        { ...request, seed },
        {
          maxInputPixels: this.limits.maxInputPixels,
          signal: options.signal,
          onStep: (step, steps) => options.onProgress?.(sample * steps + step, request.samples * steps),
        },
      );
      images.push({ png: await encodeImage(raw, request.width, request.height, "png"), seed, finishReason: "SUCCESS" });
    }
    return images;
  }
}
