import { COLOR_ADJECTIVES, COLORS, SCENE_BACKGROUNDS, type Rgb } from "./palette.js";

/**
 * What hearth-sketch understands of a prompt: shapes with their colour, count, size and
 * position, and a background. Everything else in the prompt is ignored. A procedural
 * reading of words, not a language model (docs/images.md).
 */

export type ShapeKind = "circle" | "square" | "rectangle" | "triangle" | "star" | "line" | "house" | "tree";
export type Position =
  | "left"
  | "right"
  | "top"
  | "bottom"
  | "center"
  | "top-left"
  | "top-right"
  | "bottom-left"
  | "bottom-right";

export interface SceneObject {
  shape: ShapeKind;
  /** The word the prompt used ("sun", "box"): some nouns imply a colour or a place. */
  noun: string;
  color: Rgb;
  /** The colour word, when the prompt named one (the negative prompt can remove by colour). */
  colorName: string | undefined;
  count: number;
  /** 1 is a medium object; "small" is less, "large" more. */
  size: number;
  position: Position | undefined;
}

export interface Scene {
  background: Rgb;
  objects: SceneObject[];
}

const NOUNS: Record<string, { shape: ShapeKind; color?: Rgb; position?: Position }> = {
  circle: { shape: "circle" },
  ball: { shape: "circle" },
  dot: { shape: "circle" },
  disc: { shape: "circle" },
  disk: { shape: "circle" },
  sun: { shape: "circle", color: COLORS.yellow, position: "top-right" },
  moon: { shape: "circle", color: COLORS.silver, position: "top-left" },
  square: { shape: "square" },
  box: { shape: "square" },
  block: { shape: "square" },
  cube: { shape: "square" },
  rectangle: { shape: "rectangle" },
  triangle: { shape: "triangle" },
  pyramid: { shape: "triangle", color: COLORS.beige },
  mountain: { shape: "triangle", color: [120, 110, 100], position: "bottom" },
  star: { shape: "star", color: COLORS.gold },
  line: { shape: "line" },
  stripe: { shape: "line" },
  house: { shape: "house", color: [180, 90, 60], position: "bottom" },
  home: { shape: "house", color: [180, 90, 60], position: "bottom" },
  hut: { shape: "house", color: COLORS.brown, position: "bottom" },
  tree: { shape: "tree", color: COLORS.green, position: "bottom" },
};

const COUNTS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  single: 1,
  two: 2,
  pair: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  several: 3,
  many: 7,
};
const MAX_COUNT = 12;

const SIZES: Record<string, number> = {
  tiny: 0.45,
  small: 0.65,
  little: 0.65,
  medium: 1,
  large: 1.45,
  big: 1.45,
  huge: 1.8,
  giant: 1.8,
  enormous: 1.8,
};

/** Longest phrases first, so "top left" wins over "left". */
const POSITIONS: [RegExp, Position][] = [
  [/\b(top|upper)[ -](left)\b/, "top-left"],
  [/\b(top|upper)[ -](right)\b/, "top-right"],
  [/\b(bottom|lower)[ -](left)\b/, "bottom-left"],
  [/\b(bottom|lower)[ -](right)\b/, "bottom-right"],
  [/\b(left)\b/, "left"],
  [/\b(right)\b/, "right"],
  [/\b(top|upper|above)\b/, "top"],
  [/\b(bottom|lower|below|ground)\b/, "bottom"],
  [/\b(center|centre|middle)\b/, "center"],
];

const DEFAULT_COLOR: Rgb = [40, 40, 40];
const WHITE: Rgb = COLORS.white!;

/** "a red circle on a white background" → a scene; `negative` removes shapes and colours it names. */
export function readPrompt(prompt: string, negative = ""): Scene {
  let text = normalise(prompt);
  let background: Rgb | undefined;
  const named = /(?:\b(?:on|against|over|with|in)\s+)?(?:\b(?:a|an|the)\s+)?((?:[a-z]+\s+)?[a-z]+)\s+background\b/.exec(
    text,
  );
  if (named) {
    const words = named[1]!.split(" ");
    background = readColor(words)?.color ?? sceneBackground(words.join(" "));
    text = text.replace(named[0], " ");
  }
  background ??= sceneBackground(text);
  const unwanted = readNegative(negative);
  const objects = clauses(text)
    .flatMap(readClause)
    .filter((o) => !unwanted.shapes.has(o.shape) && !(o.colorName && unwanted.colors.has(o.colorName)));
  return { background: background ?? WHITE, objects };
}

function normalise(text: string): string {
  const words = text
    .toLowerCase()
    .replace(/[,;.!?]+/g, " , ")
    .replace(/[^a-z0-9 ,-]+/g, " ");
  return ` ${words.replace(/\s+/g, " ")} `;
}

/** Phrases about one kind of thing: split at "and", commas, "with", "next to". */
function clauses(text: string): string[] {
  return text.split(/,|\band\b|\bwith\b|\bnext to\b|\bbeside\b|\bplus\b/).filter((c) => c.trim() !== "");
}

/** A clause's objects; "X above Y" is two, X placed at the top and Y at the bottom. */
function readClause(clause: string): SceneObject[] {
  const relation = /^(.*)\b(above|over|below|under|beneath)\b(.*)$/.exec(clause);
  if (relation) {
    const upper = relation[2] === "above" || relation[2] === "over";
    const first = readObject(relation[1]!);
    const second = readObject(relation[3]!);
    if (first && second) {
      first.position ??= upper ? "top" : "bottom";
      second.position ??= upper ? "bottom" : "top";
      return [first, second];
    }
  }
  const object = readObject(clause);
  return object ? [object] : [];
}

function readObject(phrase: string): SceneObject | undefined {
  const words = phrase.trim().split(" ");
  const at = words.findIndex((w) => nounOf(w) !== undefined);
  if (at < 0) return undefined;
  const noun = nounOf(words[at]!)!;
  const kind = NOUNS[noun]!;
  const before = words.slice(0, at);
  const color = readColor(before);
  const countWord = before.find((w) => COUNTS[w] !== undefined || /^\d+$/.test(w));
  const plural = words[at] !== noun;
  const count = countWord ? (COUNTS[countWord] ?? Number(countWord)) : plural ? 3 : 1;
  const sizeWord = before.find((w) => SIZES[w] !== undefined);
  const rest = words.slice(at + 1).join(" ");
  const position = POSITIONS.find(([pattern]) => pattern.test(` ${rest} `))?.[1];
  return {
    shape: kind.shape,
    noun,
    color: color?.color ?? kind.color ?? DEFAULT_COLOR,
    colorName: color?.name,
    count: Math.max(1, Math.min(MAX_COUNT, count)),
    size: sizeWord ? SIZES[sizeWord]! : 1,
    position: position ?? kind.position,
  };
}

/** "at night", "sky", "sunset": a scene word that sets the background. */
function sceneBackground(text: string): Rgb | undefined {
  return Object.entries(SCENE_BACKGROUNDS).find(([word]) => new RegExp(`\\b${word}\\b`).test(text))?.[1];
}

/** "circles" → "circle", "boxes" → "box". */
function nounOf(word: string): string | undefined {
  for (const candidate of [word, word.replace(/es$/, ""), word.replace(/s$/, "")]) {
    if (Object.hasOwn(NOUNS, candidate)) return candidate;
  }
  return undefined;
}

/** The last colour word of `words`, shifted by an adjective just before it ("dark blue"). */
function readColor(words: string[]): { name: string; color: Rgb } | undefined {
  for (let i = words.length - 1; i >= 0; i--) {
    const base = COLORS[words[i]!];
    if (!base) continue;
    const adjective = i > 0 ? COLOR_ADJECTIVES[words[i - 1]!] : undefined;
    return { name: words[i]!, color: adjective ? adjective(base) : base };
  }
  return undefined;
}

function readNegative(negative: string): { shapes: Set<ShapeKind>; colors: Set<string> } {
  const words = normalise(negative).replaceAll(",", " ").trim().split(/\s+/);
  const shapes = new Set(words.map(nounOf).flatMap((n) => (n ? [NOUNS[n]!.shape] : [])));
  const colors = new Set(words.filter((w) => Object.hasOwn(COLORS, w)));
  return { shapes, colors };
}
