import { randomUUID } from "node:crypto";

/** What a template's holes take: JSON scalars. */
type HoleValues = Record<string, string | number | boolean | null>;

/** Stands for a value in the object a template is built from; unique to this process. */
const MARK = `\u0000hole:${randomUUID()}:`;
const MARK_JSON = JSON.stringify(MARK).slice(1, -1);
const HOLE = new RegExp(`"${MARK_JSON.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")}([A-Za-z0-9_]+)"`, "g");

/**
 * A JSON text stringified once with holes, then filled many times: a streamed chunk is the
 * same JSON from token to token but for a value or two, so only those are encoded per token.
 * The result is byte for byte `JSON.stringify` of the value with the holes' values in place.
 *
 * `build` returns the value, putting `hole(name)` where each varying value goes (the hole
 * is a marker, not the value: only place it, never compute with it). Each name once.
 *
 *     const render = jsonTemplate<{ text: string }>((hole) => ({ id, choices: [{ text: hole("text") }] }));
 *     render({ text: "hi" }); // '{"id":…,"choices":[{"text":"hi"}]}'
 */
export function jsonTemplate<V extends HoleValues>(
  build: (hole: <K extends keyof V & string>(name: K) => V[K]) => unknown,
): (values: V) => string {
  const asked: string[] = [];
  const json = JSON.stringify(
    build((name) => {
      asked.push(name);
      return `${MARK}${name}` as V[typeof name];
    }),
  );
  // With one capture group, split alternates: text, hole name, text, …, text.
  const pieces = json.split(HOLE);
  const texts = pieces.filter((_, i) => i % 2 === 0);
  const names = pieces.filter((_, i) => i % 2 === 1);
  const asKey = texts.slice(1).some((text) => text.startsWith(":"));
  if (asKey || new Set(names).size !== asked.length || [...asked].sort().join() !== [...names].sort().join()) {
    throw new Error(`a JSON template's holes must each appear once, as a value: asked ${asked}, found ${names}`);
  }
  return (values) => {
    let out = texts[0]!;
    for (let i = 0; i < names.length; i++) out += JSON.stringify(values[names[i] as keyof V]) + texts[i + 1]!;
    return out;
  };
}
