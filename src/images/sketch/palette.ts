/** Colours a prompt may name, as sRGB; adjectives (dark, light, bright, pale) shift them. */

export type Rgb = readonly [number, number, number];

export const COLORS: Readonly<Record<string, Rgb>> = {
  red: [220, 30, 30],
  crimson: [180, 20, 50],
  orange: [245, 140, 20],
  yellow: [250, 215, 30],
  gold: [230, 180, 40],
  green: [40, 160, 60],
  lime: [150, 220, 40],
  teal: [20, 140, 140],
  cyan: [30, 200, 220],
  blue: [30, 70, 220],
  navy: [20, 30, 100],
  purple: [130, 50, 180],
  violet: [150, 90, 210],
  pink: [240, 120, 170],
  magenta: [210, 40, 170],
  brown: [130, 80, 40],
  black: [20, 20, 20],
  gray: [128, 128, 128],
  grey: [128, 128, 128],
  silver: [190, 190, 195],
  white: [250, 250, 250],
  beige: [225, 210, 175],
};

export const COLOR_ADJECTIVES: Readonly<Record<string, (c: Rgb) => Rgb>> = {
  dark: (c) => scale(c, 0.55),
  deep: (c) => scale(c, 0.7),
  light: (c) => mix(c, [255, 255, 255], 0.45),
  pale: (c) => mix(c, [255, 255, 255], 0.6),
  bright: (c) => mix(c, saturate(c), 0.6),
};

/** The background of "at night", "sky", "sunset". */
export const SCENE_BACKGROUNDS: Readonly<Record<string, Rgb>> = {
  night: [15, 20, 50],
  sky: [140, 195, 245],
  sunset: [250, 150, 90],
  sea: [30, 100, 170],
  grass: [90, 170, 70],
  snow: [240, 245, 250],
};

export function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t].map(clampByte) as [
    number,
    number,
    number,
  ];
}

export function scale(c: Rgb, k: number): Rgb {
  return c.map((v) => clampByte(v * k)) as unknown as Rgb;
}

/** Saturation scaled by `k` around the colour's own grey (k 0: grey, 1: itself, >1: more vivid). */
export function withSaturation(c: Rgb, k: number): Rgb {
  const grey = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
  return c.map((v) => clampByte(grey + (v - grey) * k)) as unknown as Rgb;
}

function saturate(c: Rgb): Rgb {
  return withSaturation(c, 1.6);
}

export const clampByte = (v: number) => Math.max(0, Math.min(255, Math.round(v)));

export const hex = (c: Rgb) => `#${c.map((v) => clampByte(v).toString(16).padStart(2, "0")).join("")}`;
