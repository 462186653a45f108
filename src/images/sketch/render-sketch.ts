import sharp from "sharp";
import { unreadableImage } from "../uploaded-image.js";
import { seededRandom } from "../seeded-random.js";
import { cannyEdges } from "./canny.js";
import { clampByte, mix } from "./palette.js";
import { layoutScene } from "./scene-layout.js";
import { readPrompt } from "./scene-prompt.js";
import { sceneSvg } from "./scene-svg.js";

/**
 * hearth-sketch: a procedural renderer, not a neural network (docs/images.md). It reads
 * shapes, colours, counts, sizes, positions and a background from the prompt, lays them
 * out with the seed, and refines an image towards that scene over `steps` steps, the way
 * a diffusion sampler refines noise: each step is real work, so progress is real.
 */
export interface SketchRequest {
  prompt: string;
  negativePrompt?: string;
  width: number;
  height: number;
  steps: number;
  cfgScale: number;
  seed: number;
  /** Image-to-image: the start image (any format sharp reads) and how far to move from it (0–1). */
  init?: { image: Buffer; strength: number };
  /** Control-net canny: the structure image and how strongly its edges shape the result. */
  control?: { image: Buffer; scale: number };
}

export interface SketchOptions {
  /** Called after each step with (step, steps). */
  onStep?: (step: number, steps: number) => void;
  /** Stops between steps. */
  signal?: AbortSignal;
  /** sharp's limitInputPixels for the images a request brings. */
  maxInputPixels: number;
}

/** Renders one image: raw RGB, width×height×3 bytes. */
export async function renderSketch(request: SketchRequest, options: SketchOptions): Promise<Buffer> {
  const { width, height, steps, seed } = request;
  const random = seededRandom(seed);
  const target = await sceneTarget(request, random);
  if (request.control) await applyControl(target, request, options.maxInputPixels);

  const strength = request.init ? Math.max(0, Math.min(1, request.init.strength)) : 1;
  const start = request.init
    ? await decodeTo(request.init.image, width, height, options.maxInputPixels)
    : noise(width * height * 3, random);
  const pixels = Float32Array.from(start);
  // Where the refinement ends: the scene, or for image-to-image the blend of start and scene.
  const goal = new Float32Array(pixels.length);
  for (let i = 0; i < goal.length; i++) goal[i] = start[i]! + (target[i]! - start[i]!) * strength;
  const run = Math.max(1, Math.ceil(steps * strength));
  for (let step = 0; step < run; step++) {
    if (options.signal?.aborted) throw options.signal.reason ?? new Error("cancelled");
    const k = 1 / (run - step);
    for (let i = 0; i < pixels.length; i++) pixels[i] = pixels[i]! + (goal[i]! - pixels[i]!) * k;
    options.onStep?.(step + 1, run);
    // Lets a cancel (a client gone) arrive between steps.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  // Fine texture, which fewer steps leave coarser: the seed's grain, fading with the steps.
  const grain = (24 / Math.sqrt(steps)) * strength;
  const out = Buffer.alloc(pixels.length);
  for (let i = 0; i < out.length; i++) out[i] = clampByte(pixels[i]! + (random() - 0.5) * grain);
  return out;
}

/** The scene the steps converge on: laid out with the seed, detailed by the step count. */
async function sceneTarget(request: SketchRequest, random: () => number): Promise<Uint8Array> {
  const scene = readPrompt(request.prompt, request.negativePrompt);
  // cfg_scale: how literal (a tighter layout) and how saturated the scene is.
  const looseness = 0.6 / (1 + request.cfgScale / 7);
  const saturation = Math.max(0.3, Math.min(1.6, 0.25 + request.cfgScale / 8));
  const placed = layoutScene(scene, request.width, request.height, random, looseness);
  const detail = request.steps >= 20 ? 2 : request.steps >= 10 ? 1 : 0;
  const svg = sceneSvg(placed, {
    width: request.width,
    height: request.height,
    background: scene.background,
    saturation,
    detail,
  });
  const raw = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer();
  return new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
}

/** Control-net canny: the control image's edges, drawn in the prompt's first colour, weighted by scale. */
async function applyControl(target: Uint8Array, request: SketchRequest, maxInputPixels: number): Promise<void> {
  const { width, height } = request;
  const edges = await unreadable("control_image", () =>
    cannyEdges(sharp(request.control!.image, { limitInputPixels: maxInputPixels }), width, height),
  );
  const scene = readPrompt(request.prompt, request.negativePrompt);
  const ink = scene.objects[0]?.color ?? mix(scene.background, [0, 0, 0], 0.8);
  const weight = Math.max(0, Math.min(1, request.control!.scale * 2));
  for (let p = 0; p < edges.length; p++) {
    if (edges[p] === 0) continue;
    for (let c = 0; c < 3; c++)
      target[p * 3 + c] = clampByte(target[p * 3 + c]! + (ink[c]! - target[p * 3 + c]!) * weight);
  }
}

async function decodeTo(image: Buffer, width: number, height: number, maxInputPixels: number): Promise<Uint8Array> {
  const raw = await unreadable("init_image", () =>
    sharp(image, { limitInputPixels: maxInputPixels })
      .removeAlpha()
      .resize(width, height, { fit: "fill" })
      .raw()
      .toBuffer(),
  );
  return new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
}

/** An uploaded image that fails to decode (truncated, corrupt) is the request's fault: a 400 naming it. */
async function unreadable<T>(param: string, decode: () => Promise<T>): Promise<T> {
  try {
    return await decode();
  } catch (cause) {
    throw unreadableImage(param, cause);
  }
}

function noise(length: number, random: () => number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(random() * 256);
  return out;
}

/** Raw RGB → PNG or JPEG, by sharp. */
export function encodeImage(raw: Buffer, width: number, height: number, format: "png" | "jpeg"): Promise<Buffer> {
  const image = sharp(raw, { raw: { width, height, channels: 3 } });
  return (format === "png" ? image.png() : image.jpeg({ quality: 90 })).toBuffer();
}
