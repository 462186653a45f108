import { hex, mix, scale, withSaturation, type Rgb } from "./palette.js";
import type { Placed } from "./scene-layout.js";

/**
 * A placed scene as SVG, for sharp (librsvg) to rasterise. Nothing of the prompt's text
 * reaches the SVG: only numbers and colours Hearth computed. `detail` grows with the steps:
 * 0 flat fills, 1 adds outlines, 2 adds shading.
 */
export interface SvgOptions {
  width: number;
  height: number;
  background: Rgb;
  saturation: number;
  detail: 0 | 1 | 2;
}

export function sceneSvg(placed: Placed[], options: SvgOptions): string {
  const { width, height, detail } = options;
  const defs: string[] = [];
  const body = placed.map((p, i) => {
    const base = withSaturation(p.object.color, options.saturation);
    let fill = hex(base);
    if (detail >= 2) {
      defs.push(
        `<linearGradient id="g${i}" x1="0" y1="0" x2="1" y2="1">` +
          `<stop offset="0" stop-color="${hex(mix(base, [255, 255, 255], 0.35))}"/>` +
          `<stop offset="1" stop-color="${hex(scale(base, 0.7))}"/></linearGradient>`,
      );
      fill = `url(#g${i})`;
    }
    const stroke = detail >= 1 ? ` stroke="${hex(scale(base, 0.45))}" stroke-width="${fmt(p.r * 0.07)}"` : "";
    return shape(p, fill, stroke, base);
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<defs>${defs.join("")}</defs>` +
    `<rect width="100%" height="100%" fill="${hex(options.background)}"/>` +
    `${body.join("")}</svg>`
  );
}

function shape({ object, x, y, r }: Placed, fill: string, stroke: string, base: Rgb): string {
  const paint = `fill="${fill}"${stroke}`;
  switch (object.shape) {
    case "circle":
      return `<circle cx="${fmt(x)}" cy="${fmt(y)}" r="${fmt(r)}" ${paint}/>`;
    case "square":
      return rect(x - 0.8 * r, y - 0.8 * r, 1.6 * r, 1.6 * r, paint);
    case "rectangle":
      return rect(x - 1.1 * r, y - 0.6 * r, 2.2 * r, 1.2 * r, paint);
    case "line":
      return rect(x - 1.5 * r, y - 0.09 * r, 3 * r, 0.18 * r, paint);
    case "triangle":
      return polygon([x, y - r, x - 1.1 * r, y + 0.8 * r, x + 1.1 * r, y + 0.8 * r], paint);
    case "star":
      return polygon(starPoints(x, y, r), paint);
    case "house":
      return (
        rect(x - r, y - 0.2 * r, 2 * r, 1.2 * r, paint) +
        polygon(
          [x - 1.2 * r, y - 0.2 * r, x, y - 1.1 * r, x + 1.2 * r, y - 0.2 * r],
          `fill="${hex(scale(base, 0.6))}"`,
        ) +
        rect(x - 0.2 * r, y + 0.4 * r, 0.4 * r, 0.6 * r, `fill="${hex(scale(base, 0.4))}"`)
      );
    case "tree":
      return (
        rect(x - 0.15 * r, y + 0.1 * r, 0.3 * r, 0.9 * r, `fill="#6b4423"`) +
        `<circle cx="${fmt(x)}" cy="${fmt(y - 0.3 * r)}" r="${fmt(0.7 * r)}" ${paint}/>`
      );
  }
}

const rect = (x: number, y: number, w: number, h: number, paint: string) =>
  `<rect x="${fmt(x)}" y="${fmt(y)}" width="${fmt(w)}" height="${fmt(h)}" ${paint}/>`;

const polygon = (points: number[], paint: string) => `<polygon points="${points.map(fmt).join(" ")}" ${paint}/>`;

function starPoints(x: number, y: number, r: number): number[] {
  const points: number[] = [];
  for (let i = 0; i < 10; i++) {
    const radius = i % 2 === 0 ? r : 0.45 * r;
    const angle = -Math.PI / 2 + (i * Math.PI) / 5;
    points.push(x + radius * Math.cos(angle), y + radius * Math.sin(angle));
  }
  return points;
}

const fmt = (v: number) => v.toFixed(1);
