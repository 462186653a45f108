/**
 * Writes the example images of docs/images.md into docs/images/ (small PNGs, committed):
 * hearth-sketch's real output for each prompt, image-to-image and control-net included.
 *   npm run images:docs
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { SketchBackend } from "../src/images/backends/sketch-backend.js";
import type { ImageRequest } from "../src/images/image-backend.js";

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "docs", "images");
const size = 256;
const backend = new SketchBackend({ maxInputPixels: 4096 * 4096 });
const base = { width: size, height: size, cfgScale: 7, steps: 30, seed: 7, samples: 1 } as const;

async function render(name: string, request: Partial<ImageRequest> & { prompt: string }): Promise<Buffer> {
  const [image] = await backend.generate({ ...base, ...request });
  const png = await sharp(image!.png).png({ compressionLevel: 9, palette: true, quality: 90 }).toBuffer();
  await writeFile(path.join(out, `${name}.png`), png);
  console.log(`docs/images/${name}.png  ${request.prompt}`);
  return image!.png;
}

await mkdir(out, { recursive: true });
await render("red-circle", { prompt: "a red circle on a white background" });
await render("blue-squares", { prompt: "two blue squares on the left" });
const night = await render("night", { prompt: "a house and three trees at night, a moon" });
await render("star-above", { prompt: "a small yellow star above two large green triangles" });
await render("seed-8", { prompt: "a house and three trees at night, a moon", seed: 8 });
await render("steps-4", { prompt: "a house and three trees at night, a moon", steps: 4 });
await render("cfg-2", { prompt: "a house and three trees at night, a moon", cfgScale: 2 });
await render("negative", { prompt: "a house and three trees at night, a moon", negativePrompt: "trees" });
await render("image-to-image", { prompt: "a yellow sun on a sky background", init: { image: night, strength: 0.5 } });
await render("control-net", { prompt: "a red line", control: { image: night, name: "canny", scale: 0.5 } });
