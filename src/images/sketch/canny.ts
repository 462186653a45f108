import type { Sharp } from "sharp";

/**
 * Edges of an image, canny-style: grey, a Gaussian blur, Sobel gradients (sharp's
 * convolution), then two thresholds: a strong gradient is an edge, a weaker one only next
 * to a strong one. Returns one byte per pixel of a width×height map, 255 on an edge.
 */
export async function cannyEdges(image: Sharp, width: number, height: number): Promise<Uint8Array> {
  // Flattened first: greyscale() of an image with alpha would keep working on the alpha channel.
  const grey = image
    .clone()
    .flatten({ background: "#ffffff" })
    .resize(width, height, { fit: "fill" })
    .greyscale()
    .blur(1.2);
  // The kernels' outputs are offset by 128, so that negative gradients survive as bytes.
  const gradient = (kernel: number[]) =>
    grey.clone().convolve({ width: 3, height: 3, kernel, scale: 4, offset: 128 }).extractChannel(0).raw().toBuffer();
  const [gx, gy] = await Promise.all([
    gradient([-1, 0, 1, -2, 0, 2, -1, 0, 1]),
    gradient([-1, -2, -1, 0, 0, 0, 1, 2, 1]),
  ]);
  const magnitude = new Float32Array(width * height);
  let max = 0;
  for (let i = 0; i < magnitude.length; i++) {
    magnitude[i] = Math.hypot(gx[i]! - 128, gy[i]! - 128);
    if (magnitude[i]! > max) max = magnitude[i]!;
  }
  const edges = new Uint8Array(width * height);
  if (max === 0) return edges;
  const high = max * 0.3;
  const low = max * 0.12;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const m = magnitude[i]!;
      if (m >= high || (m >= low && strongNeighbour(magnitude, i, width, high))) edges[i] = 255;
    }
  }
  return edges;
}

function strongNeighbour(magnitude: Float32Array, i: number, width: number, high: number): boolean {
  for (const d of [-width - 1, -width, -width + 1, -1, 1, width - 1, width, width + 1]) {
    if (magnitude[i + d]! >= high) return true;
  }
  return false;
}
