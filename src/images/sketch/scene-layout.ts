import type { Position, Scene, SceneObject } from "./scene-prompt.js";

/** One drawn instance of an object: its centre and radius in pixels. */
export interface Placed {
  object: SceneObject;
  x: number;
  y: number;
  r: number;
}

type Box = readonly [x0: number, y0: number, x1: number, y1: number];

/** Where each position puts an object, as fractions of the canvas. */
const REGIONS: Record<Position | "anywhere", Box> = {
  anywhere: [0.05, 0.05, 0.95, 0.95],
  left: [0.02, 0.1, 0.5, 0.9],
  right: [0.5, 0.1, 0.98, 0.9],
  top: [0.08, 0.02, 0.92, 0.5],
  bottom: [0.08, 0.5, 0.92, 0.98],
  center: [0.25, 0.25, 0.75, 0.75],
  "top-left": [0.02, 0.02, 0.5, 0.5],
  "top-right": [0.5, 0.02, 0.98, 0.5],
  "bottom-left": [0.02, 0.5, 0.5, 0.98],
  "bottom-right": [0.5, 0.5, 0.98, 0.98],
};

/**
 * Places every instance of every object: a group's instances share its region in a grid,
 * each nudged by the seed. `looseness` (from cfg_scale) is how far a nudge may go, as a
 * fraction of a grid cell.
 */
export function layoutScene(
  scene: Scene,
  width: number,
  height: number,
  random: () => number,
  looseness: number,
): Placed[] {
  const placed: Placed[] = [];
  // Groups that share a region share it side by side, in the prompt's order.
  const sharing = new Map<string, SceneObject[]>();
  for (const object of scene.objects) {
    const key = object.position ?? "anywhere";
    sharing.set(key, [...(sharing.get(key) ?? []), object]);
  }
  const anywhere = freeRegion(scene.objects);
  for (const object of scene.objects) {
    const group = sharing.get(object.position ?? "anywhere")!;
    const [fx0, fy0, fx1, fy1] = object.position ? REGIONS[object.position] : anywhere;
    const slice = (fx1 - fx0) / group.length;
    const sx0 = fx0 + slice * group.indexOf(object);
    const [x0, y0, w, h] = [sx0 * width, fy0 * height, slice * width, (fy1 - fy0) * height];
    const columns = Math.ceil(Math.sqrt((object.count * w) / h));
    const rows = Math.ceil(object.count / columns);
    const cellW = w / columns;
    const cellH = h / rows;
    const r = Math.min(cellW, cellH) * 0.34 * object.size;
    for (let i = 0; i < object.count; i++) {
      const jitter = () => (random() - 0.5) * looseness;
      const cx = x0 + ((i % columns) + 0.5 + jitter()) * cellW;
      const cy = y0 + (Math.floor(i / columns) + 0.5 + jitter()) * cellH;
      placed.push({ object, x: clamp(cx, r, width - r), y: clamp(cy, r, height - r), r });
    }
  }
  return placed;
}

/** Where objects without a position go: away from the sides the others were put on. */
function freeRegion(objects: SceneObject[]): Box {
  let [x0, y0, x1, y1] = REGIONS.anywhere;
  const used = new Set(objects.map((o) => o.position));
  if (used.has("left") && !used.has("right")) x0 = 0.5;
  if (used.has("right") && !used.has("left")) x1 = 0.5;
  if (used.has("top") && !used.has("bottom")) y0 = 0.5;
  if (used.has("bottom") && !used.has("top")) y1 = 0.5;
  return [x0, y0, x1, y1];
}

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(Math.max(lo, hi), v));
