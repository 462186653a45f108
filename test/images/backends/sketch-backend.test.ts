import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { SketchBackend } from "../../../src/images/backends/sketch-backend.js";

describe("the sketch backend", () => {
  it("renders each sample with its own seed as a PNG, reporting progress over all of them", async () => {
    const backend = new SketchBackend({ maxInputPixels: 1 << 24 });
    const progress: [number, number][] = [];
    const images = await backend.generate(
      { prompt: "a yellow star", width: 64, height: 64, cfgScale: 7, steps: 5, seed: 10, samples: 3 },
      { onProgress: (step, steps) => progress.push([step, steps]) },
    );
    expect(images.map((i) => [i.seed, i.finishReason])).toEqual([
      [10, "SUCCESS"],
      [11, "SUCCESS"],
      [12, "SUCCESS"],
    ]);
    for (const image of images) expect(await sharp(image.png).metadata()).toMatchObject({ format: "png", width: 64 });
    expect(images[0]!.png.equals(images[1]!.png)).toBe(false);
    expect(progress.map(([step]) => step)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(new Set(progress.map(([, steps]) => steps))).toEqual(new Set([15]));
  });
});
