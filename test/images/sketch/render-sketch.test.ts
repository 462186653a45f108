import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { cannyEdges } from "../../../src/images/sketch/canny.js";
import { renderSketch, type SketchRequest } from "../../../src/images/sketch/render-sketch.js";

/** What these tests check is pixels: where colours are, and how images relate. */

const SIZE = 256;
const LIMIT = { maxInputPixels: 4096 * 4096 };
const base: SketchRequest = { prompt: "", width: SIZE, height: SIZE, steps: 20, cfgScale: 7, seed: 7 };
const render = (request: Partial<SketchRequest>) => renderSketch({ ...base, ...request }, LIMIT);

type Pixel = [number, number, number];
const at = (raw: Buffer, x: number, y: number): Pixel => {
  const i = (y * SIZE + x) * 3;
  return [raw[i]!, raw[i + 1]!, raw[i + 2]!];
};
const mask = (raw: Buffer, test: (p: Pixel) => boolean) => {
  const out = new Uint8Array(SIZE * SIZE);
  for (let y = 0; y < SIZE; y++) for (let x = 0; x < SIZE; x++) out[y * SIZE + x] = test(at(raw, x, y)) ? 1 : 0;
  return out;
};
const isRed = ([r, g, b]: Pixel) => r > 140 && r > g + 60 && r > b + 60;
const isBlue = ([r, g, b]: Pixel) => b > 140 && b > r + 60 && b > g + 40;
const isWhite = ([r, g, b]: Pixel) => r > 225 && g > 225 && b > 225;

/** Connected regions of a mask (4-neighbours), as lists of pixel indices, largest first. */
function components(m: Uint8Array): number[][] {
  const seen = new Uint8Array(m.length);
  const found: number[][] = [];
  for (let start = 0; start < m.length; start++) {
    if (!m[start] || seen[start]) continue;
    const region: number[] = [];
    const stack = [start];
    seen[start] = 1;
    while (stack.length) {
      const p = stack.pop()!;
      region.push(p);
      const x = p % SIZE;
      for (const q of [p - SIZE, p + SIZE, x > 0 ? p - 1 : -1, x < SIZE - 1 ? p + 1 : -1]) {
        if (q >= 0 && q < m.length && m[q] && !seen[q]) {
          seen[q] = 1;
          stack.push(q);
        }
      }
    }
    if (region.length > 20) found.push(region);
  }
  return found.sort((a, b) => b.length - a.length);
}

const meanAbsDiff = (a: Uint8Array, b: Uint8Array) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
};

describe("hearth-sketch", () => {
  it("draws a red circle on white: red pixels in a round region, white around it", async () => {
    const raw = await render({ prompt: "a red circle on a white background" });
    const [circle, ...others] = components(mask(raw, isRed));
    expect(others).toEqual([]);
    const xs = circle!.map((p) => p % SIZE);
    const ys = circle!.map((p) => Math.floor(p / SIZE));
    const w = Math.max(...xs) - Math.min(...xs) + 1;
    const h = Math.max(...ys) - Math.min(...ys) + 1;
    expect(w / h).toBeGreaterThan(0.85);
    expect(w / h).toBeLessThan(1.15);
    // A disc fills π/4 of its bounding box (its outline, in a darker red, is not counted).
    expect(circle!.length / (w * h)).toBeGreaterThan(0.6);
    expect(circle!.length / (w * h)).toBeLessThan(0.85);
    for (const [x, y] of [
      [2, 2],
      [SIZE - 3, 2],
      [2, SIZE - 3],
      [SIZE - 3, SIZE - 3],
    ])
      expect(isWhite(at(raw, x!, y!))).toBe(true);
    const white = mask(raw, isWhite).reduce((a, b) => a + b, 0);
    expect(white / (SIZE * SIZE)).toBeGreaterThan(0.5);
  });

  it("draws two blue squares in the left half", async () => {
    const raw = await render({ prompt: "two blue squares on the left" });
    // Blobs, not the slivers of blended outline along their edges.
    const all = components(mask(raw, isBlue));
    const blobs = all.filter((b) => b.length > all[0]!.length / 10);
    expect(
      blobs.map((b) => b.length),
      "blue regions",
    ).toHaveLength(2);
    for (const blob of blobs) {
      expect(Math.max(...blob.map((p) => p % SIZE))).toBeLessThan(SIZE / 2);
      const xs = blob.map((p) => p % SIZE);
      const ys = blob.map((p) => Math.floor(p / SIZE));
      const boxArea = (Math.max(...xs) - Math.min(...xs) + 1) * (Math.max(...ys) - Math.min(...ys) + 1);
      expect(blob.length / boxArea).toBeGreaterThan(0.85); // square, not round
    }
  });

  it("keeps an object without a position out of the side another was put on", async () => {
    const raw = await render({ prompt: "a red circle and two blue squares on the left" });
    const [circle] = components(mask(raw, isRed));
    expect(Math.min(...circle!.map((p) => p % SIZE))).toBeGreaterThanOrEqual(SIZE / 2 - 2);
  });

  it("is deterministic for a seed, and another seed gives another image", async () => {
    const prompt = "three stars and a tree at night";
    const a = await render({ prompt, seed: 1 });
    expect((await render({ prompt, seed: 1 })).equals(a)).toBe(true);
    const b = await render({ prompt, seed: 2 });
    expect(b.equals(a)).toBe(false);
    expect(meanAbsDiff(a, b)).toBeGreaterThan(2);
  });

  it("refines over the steps it is given, reporting each, and stops between steps when cancelled", async () => {
    const seen: number[] = [];
    await renderSketch({ ...base, prompt: "a circle", steps: 12 }, { ...LIMIT, onStep: (step) => seen.push(step) });
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const abort = new AbortController();
    const steps: number[] = [];
    const cancelled = renderSketch(
      { ...base, prompt: "a circle", steps: 50 },
      {
        ...LIMIT,
        signal: abort.signal,
        onStep: (step) => {
          steps.push(step);
          if (step === 3) abort.abort(new Error("client gone"));
        },
      },
    );
    await expect(cancelled).rejects.toThrow("client gone");
    expect(steps).toEqual([1, 2, 3]);
  });

  it("adds detail with more steps and saturation with a higher cfg_scale", async () => {
    const prompt = "a green square";
    const few = await render({ prompt, steps: 4 });
    const many = await render({ prompt, steps: 40 });
    expect(meanAbsDiff(few, many)).toBeGreaterThan(1);
    const saturation = (raw: Buffer) => {
      let sum = 0;
      for (let i = 0; i < raw.length; i += 3)
        sum += Math.max(raw[i]!, raw[i + 1]!, raw[i + 2]!) - Math.min(raw[i]!, raw[i + 1]!, raw[i + 2]!);
      return sum / (raw.length / 3);
    };
    expect(saturation(await render({ prompt, cfgScale: 14 }))).toBeGreaterThan(
      saturation(await render({ prompt, cfgScale: 2 })) * 1.3,
    );
  });

  it("image-to-image: strength 0 keeps the init image, strength 1 is the text-to-image scene", async () => {
    const init = await sharp({ create: { width: 300, height: 200, channels: 3, background: "#3a7d44" } })
      .png()
      .toBuffer();
    const initRaw = await sharp(init).resize(SIZE, SIZE, { fit: "fill" }).raw().toBuffer();
    const prompt = "a red circle on a white background";
    const kept = await render({ prompt, init: { image: init, strength: 0 } });
    expect(meanAbsDiff(kept, initRaw)).toBeLessThan(2);
    const replaced = await render({ prompt, init: { image: init, strength: 1 } });
    const text = await render({ prompt });
    expect(meanAbsDiff(replaced, text)).toBeLessThan(6);
    const half = await render({ prompt, init: { image: init, strength: 0.5 } });
    expect(meanAbsDiff(half, initRaw)).toBeGreaterThan(20);
    expect(meanAbsDiff(half, text)).toBeGreaterThan(20);
  });

  it("control-net canny: the output's edges follow the control image's, and not an unrelated one's", async () => {
    const outline = (svg: string) =>
      sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}">${svg}</svg>`))
        .png()
        .toBuffer();
    const control = await outline(
      `<rect width="100%" height="100%" fill="white"/><rect x="30" y="40" width="90" height="150" fill="black"/>`,
    );
    const unrelated = await outline(
      `<rect width="100%" height="100%" fill="white"/><circle cx="190" cy="180" r="45" fill="black"/>`,
    );
    const edgesOf = async (png: Buffer) => cannyEdges(sharp(png), SIZE, SIZE);
    const output = await render({ prompt: "a blue line at the top", control: { image: control, scale: 0.5 } });
    const outEdges = await cannyEdges(sharp(output, { raw: { width: SIZE, height: SIZE, channels: 3 } }), SIZE, SIZE);
    /** The share of a control image's edge pixels that the output has an edge within 2 pixels of. */
    const followed = (controlEdges: Uint8Array) => {
      let hit = 0;
      let total = 0;
      for (let y = 2; y < SIZE - 2; y++)
        for (let x = 2; x < SIZE - 2; x++) {
          if (!controlEdges[y * SIZE + x]) continue;
          total++;
          let near = false;
          for (let dy = -2; dy <= 2 && !near; dy++)
            for (let dx = -2; dx <= 2 && !near; dx++) near = outEdges[(y + dy) * SIZE + x + dx] !== 0;
          if (near) hit++;
        }
      return hit / total;
    };
    const withControl = followed(await edgesOf(control));
    const withUnrelated = followed(await edgesOf(unrelated));
    expect(withControl).toBeGreaterThan(0.8);
    expect(withControl).toBeGreaterThan(withUnrelated * 3);
  });
});
