import { MAX_SCHEMA_BOUND, MAX_SCHEMA_DEPTH } from "./sampling-limits.js";

/**
 * The part of JSON Schema a generation can be held to, and its translation into the dialect
 * the engine's grammar builder speaks (node-llama-cpp's GbnfJsonSchema).
 *
 * A keyword is in the subset only when every output of the grammar built from it validates
 * against the user's schema; the grammar may be stricter than the schema (every property is
 * written, in order; no property beyond `properties`), never looser. A keyword outside the
 * subset that would change what is valid is refused, never ignored; annotations are accepted.
 * docs/api.md ("Structured output") lists both.
 */

/** Keywords that only describe: accepted anywhere, with no effect on what is generated. */
export const DESCRIPTIVE_KEYWORDS: readonly string[] = [
  "title",
  "description",
  "$comment",
  "examples",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
];

/** A schema in the grammar builder's dialect (node-llama-cpp's GbnfJsonSchema, structurally). */
export type GrammarJsonSchema = { readonly [keyword: string]: unknown };

export type SubsetCheck =
  | { ok: true; schema: GrammarJsonSchema }
  /** `keyword` is the keyword refused; `at` the JSON pointer of the schema that holds it. */
  | { ok: false; keyword: string; at: string; reason: string };

/** The most digits the grammar writes an integer with, and so the largest integer it writes. */
export const INTEGER_DIGITS = 15;
export const MAX_GRAMMAR_INTEGER = 10 ** INTEGER_DIGITS - 1;

const SCALAR_TYPES = ["string", "number", "integer", "boolean", "null"];
const TYPES = [...SCALAR_TYPES, "object", "array"];
/** Keywords each type accepts beyond `type` (the descriptive ones aside). */
const TYPE_KEYWORDS: Record<string, readonly string[]> = {
  string: ["minLength", "maxLength"],
  number: [],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"],
  boolean: [],
  null: [],
  object: ["properties", "required", "additionalProperties", "minProperties", "maxProperties"],
  array: ["items", "prefixItems", "minItems", "maxItems", "uniqueItems"],
};
const DEF_PREFIXES = ["#/$defs/", "#/definitions/"];

class Refusal extends Error {
  constructor(
    readonly keyword: string,
    readonly at: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * Checks `schema` against the subset and translates it. Definitions (`$defs`, or draft-07's
 * `definitions`) are read at the root only, and `$ref` points at one of them.
 */
export function checkJsonSchema(schema: unknown): SubsetCheck {
  try {
    return { ok: true, schema: translateRoot(schema) };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { ok: false, keyword: error.keyword, at: error.at || "/", reason: error.reason };
  }
}

function translateRoot(schema: unknown): GrammarJsonSchema {
  if (!isObject(schema)) return translate(schema, "", new Set(), 0);
  const { $schema, $id, $defs, definitions, ...rest } = schema;
  if ($schema !== undefined && typeof $schema !== "string")
    throw new Refusal("$schema", "", "$schema must be a string.");
  if ($id !== undefined && typeof $id !== "string") throw new Refusal("$id", "", "$id must be a string.");
  if ($defs !== undefined && definitions !== undefined) {
    throw new Refusal("definitions", "", "Give definitions in $defs or in definitions, not both.");
  }
  const rawDefs = $defs ?? definitions;
  const defsKeyword = $defs !== undefined ? "$defs" : "definitions";
  if (rawDefs !== undefined && !isObject(rawDefs))
    throw new Refusal(defsKeyword, "", `${defsKeyword} must be an object.`);
  const names = new Set(Object.keys(rawDefs ?? {}));
  const defs: Record<string, GrammarJsonSchema> = {};
  for (const [name, def] of Object.entries(rawDefs ?? {})) {
    defs[name] = translate(def, `/${defsKeyword}/${escapePointer(name)}`, names, 1);
  }
  const root = translate(rest, "", names, 0);
  if (names.size === 0) return root;
  // The builder resolves "#/$defs/<name>" against the $defs of the schemas around a $ref; only
  // these kinds of schema can hold one.
  const holdsRefs = "$ref" in root || "oneOf" in root || root.type === "object" || root.type === "array";
  return holdsRefs ? { ...root, $defs: defs } : root;
}

function translate(schema: unknown, at: string, defNames: ReadonlySet<string>, depth: number): GrammarJsonSchema {
  if (depth > MAX_SCHEMA_DEPTH) {
    throw new Refusal("type", at, `The schema nests deeper than ${MAX_SCHEMA_DEPTH} levels.`);
  }
  if (schema === true) return anyJson();
  if (schema === false) throw new Refusal("false", at, "A false schema allows nothing; no output could match it.");
  if (!isObject(schema)) throw new Refusal("type", at, "A schema must be an object or a boolean.");
  const keywords = Object.keys(schema).filter((k) => !DESCRIPTIVE_KEYWORDS.includes(k));
  for (const nested of ["$defs", "definitions", "$schema", "$id"]) {
    if (nested in schema) throw new Refusal(nested, at, `${nested} is accepted at the schema's root only.`);
  }
  if (keywords.length === 0) return anyJson();
  if ("oneOf" in schema) {
    throw new Refusal(
      "oneOf",
      at,
      "oneOf asks that exactly one alternative match, which a grammar cannot ensure; use anyOf.",
    );
  }

  if ("$ref" in schema) {
    only(schema, ["$ref"], at, "beside $ref");
    return { $ref: `#/$defs/${defName(schema.$ref, at, defNames)}` };
  }
  if ("anyOf" in schema) {
    only(schema, ["anyOf"], at, "beside anyOf");
    const options = schema.anyOf;
    if (!Array.isArray(options) || options.length === 0) {
      throw new Refusal("anyOf", at, "anyOf must be a non-empty array of schemas.");
    }
    return { oneOf: options.map((option, i) => translate(option, `${at}/anyOf/${i}`, defNames, depth + 1)) };
  }
  if ("enum" in schema || "const" in schema) return literals(schema, at);

  const type = schema.type;
  if (type === undefined) {
    const keyword = keywords[0]!;
    throw new Refusal(keyword, at, `${describe(keyword)} is not supported here: name the schema's type.`);
  }
  if (Array.isArray(type)) {
    if (
      type.length === 0 ||
      type.some((t) => typeof t !== "string" || !TYPES.includes(t)) ||
      new Set(type).size < type.length
    ) {
      throw new Refusal("type", at, `type must name distinct types among ${TYPES.join(", ")}.`);
    }
    if (type.length === 1) return translate({ ...schema, type: type[0] }, at, defNames, depth);
    // Each type with the keywords that apply to it; keywords that apply to none are refused.
    const applying = new Set(type.flatMap((t) => TYPE_KEYWORDS[t as string]!));
    const stray = keywords.find((k) => k !== "type" && !applying.has(k));
    if (stray) throw new Refusal(stray, at, `${describe(stray)} is not supported with these types.`);
    return {
      oneOf: type.map((t) => {
        const own = Object.fromEntries(
          Object.entries(schema).filter(([k]) => k === "type" || TYPE_KEYWORDS[t as string]!.includes(k)),
        );
        return translate({ ...own, type: t }, at, defNames, depth);
      }),
    };
  }
  if (typeof type !== "string" || !TYPES.includes(type)) {
    throw new Refusal("type", at, `type must be one of ${TYPES.join(", ")}.`);
  }
  only(schema, ["type", ...TYPE_KEYWORDS[type]!], at, `for type ${type}`);
  if (type === "string") return stringSchema(schema, at);
  if (type === "object") return objectSchema(schema, at, defNames, depth);
  if (type === "array") return arraySchema(schema, at, defNames, depth);
  if (type === "integer") integerBounds(schema, at);
  return { type };
}

/**
 * The grammar writes integers of at most INTEGER_DIGITS digits, so it keeps within
 * ±MAX_GRAMMAR_INTEGER by itself: a bound at least that wide (such as the safe-integer range
 * that zod and other schema writers give every integer) is met by every output and accepted;
 * a tighter one cannot be enforced and is refused.
 */
function integerBounds(schema: Record<string, unknown>, at: string): void {
  const below = (keyword: string, inclusive: boolean) => {
    const value = schema[keyword];
    if (value === undefined) return;
    const wide =
      typeof value === "number" && (inclusive ? value <= -MAX_GRAMMAR_INTEGER : value < -MAX_GRAMMAR_INTEGER);
    if (!wide) throw tightBound(keyword, at);
  };
  const above = (keyword: string, inclusive: boolean) => {
    const value = schema[keyword];
    if (value === undefined) return;
    const wide = typeof value === "number" && (inclusive ? value >= MAX_GRAMMAR_INTEGER : value > MAX_GRAMMAR_INTEGER);
    if (!wide) throw tightBound(keyword, at);
  };
  below("minimum", true);
  below("exclusiveMinimum", false);
  above("maximum", true);
  above("exclusiveMaximum", false);
}

function tightBound(keyword: string, at: string): Refusal {
  return new Refusal(
    keyword,
    at,
    `${describe(keyword)} is not supported: a grammar cannot bound a number's value, only its digits. ` +
      `Integers are written with at most ${INTEGER_DIGITS} digits, so bounds of ±${MAX_GRAMMAR_INTEGER} or wider are accepted.`,
  );
}

function stringSchema(schema: Record<string, unknown>, at: string): GrammarJsonSchema {
  const minLength = bound(schema, "minLength", at);
  const maxLength = bound(schema, "maxLength", at);
  if (minLength !== undefined && maxLength !== undefined && maxLength < minLength) {
    throw new Refusal("maxLength", at, "maxLength is below minLength: no string could match.");
  }
  return { type: "string", ...(minLength ? { minLength } : {}), ...(maxLength !== undefined ? { maxLength } : {}) };
}

function objectSchema(
  schema: Record<string, unknown>,
  at: string,
  defNames: ReadonlySet<string>,
  depth: number,
): GrammarJsonSchema {
  const rawProperties = schema.properties ?? {};
  if (!isObject(rawProperties)) throw new Refusal("properties", at, "properties must be an object.");
  const properties: Record<string, GrammarJsonSchema> = {};
  for (const [name, property] of Object.entries(rawProperties)) {
    writable(name, "properties", at);
    properties[name] = translate(property, `${at}/properties/${escapePointer(name)}`, defNames, depth + 1);
  }
  const names = Object.keys(properties);
  const required = schema.required ?? [];
  if (!Array.isArray(required) || required.some((r) => typeof r !== "string")) {
    throw new Refusal("required", at, "required must be an array of property names.");
  }
  // Every property in `properties` is always written, so any of them may be required.
  const unknown = required.find((r) => !names.includes(r));
  if (unknown !== undefined) {
    throw new Refusal(
      "required",
      at,
      `required names "${unknown}", which is not in properties: it would never be written.`,
    );
  }
  const additional = schema.additionalProperties ?? false;
  const minProperties = bound(schema, "minProperties", at);
  const maxProperties = bound(schema, "maxProperties", at);
  if (additional === false) {
    // Exactly the properties listed are written.
    if (minProperties !== undefined && minProperties > names.length) {
      throw new Refusal(
        "minProperties",
        at,
        "minProperties asks for more properties than properties lists (and no others are written).",
      );
    }
    if (maxProperties !== undefined && maxProperties < names.length) {
      throw new Refusal(
        "maxProperties",
        at,
        "maxProperties is below the number of properties, all of which are written.",
      );
    }
    return { type: "object", properties };
  }
  // Free keys may repeat a listed key or each other, and a JSON parser keeps the last one: with
  // listed properties that could replace a valid value, and repeats would undercount minProperties.
  if (names.length > 0) {
    throw new Refusal(
      "additionalProperties",
      at,
      "additionalProperties is supported only on an object without properties.",
    );
  }
  if (minProperties) {
    throw new Refusal("minProperties", at, "minProperties is supported only on an object whose properties are listed.");
  }
  const values =
    additional === true ? anyJson() : translate(additional, `${at}/additionalProperties`, defNames, depth + 1);
  return { type: "object", additionalProperties: values, ...(maxProperties !== undefined ? { maxProperties } : {}) };
}

function arraySchema(
  schema: Record<string, unknown>,
  at: string,
  defNames: ReadonlySet<string>,
  depth: number,
): GrammarJsonSchema {
  if (schema.uniqueItems !== undefined && schema.uniqueItems !== false) {
    throw new Refusal("uniqueItems", at, "uniqueItems cannot be enforced while generating.");
  }
  let minItems = bound(schema, "minItems", at);
  let maxItems = bound(schema, "maxItems", at);
  const out: Record<string, unknown> = { type: "array" };
  if (schema.prefixItems !== undefined) {
    if (!Array.isArray(schema.prefixItems) || schema.prefixItems.length === 0) {
      throw new Refusal("prefixItems", at, "prefixItems must be a non-empty array of schemas.");
    }
    out.prefixItems = schema.prefixItems.map((item, i) =>
      translate(item, `${at}/prefixItems/${i}`, defNames, depth + 1),
    );
  }
  const prefix = (out.prefixItems as unknown[] | undefined)?.length ?? 0;
  if (schema.items === false) {
    // No items beyond the prefix.
    if (minItems !== undefined && minItems > prefix)
      throw new Refusal("minItems", at, "minItems is above the items allowed.");
    maxItems = prefix;
  } else if (schema.items !== undefined && schema.items !== true) {
    out.items = translate(schema.items, `${at}/items`, defNames, depth + 1);
  }
  if (maxItems !== undefined && maxItems < Math.max(prefix, minItems ?? 0)) {
    throw new Refusal("maxItems", at, "maxItems is below minItems or the prefixItems: no array could match.");
  }
  if (minItems !== undefined && minItems <= prefix) minItems = undefined;
  if (minItems) out.minItems = minItems;
  if (maxItems !== undefined) out.maxItems = maxItems;
  return out;
}

/** enum and const: scalar values, optionally narrowed by a type. */
function literals(schema: Record<string, unknown>, at: string): GrammarJsonSchema {
  only(schema, ["enum", "const", "type"], at, "beside enum or const");
  const keyword = "const" in schema ? "const" : "enum";
  if ("const" in schema && "enum" in schema) throw new Refusal("const", at, "Give const or enum, not both.");
  const values = keyword === "const" ? [schema.const] : schema.enum;
  if (!Array.isArray(values) || values.length === 0) throw new Refusal("enum", at, "enum must be a non-empty array.");
  if (values.some((v) => v !== null && !["string", "number", "boolean"].includes(typeof v))) {
    throw new Refusal(keyword, at, `${keyword} values must be strings, numbers, booleans or null.`);
  }
  if (values.some((v) => typeof v === "number" && !Number.isFinite(v))) {
    throw new Refusal(keyword, at, `${keyword} numbers must be finite.`);
  }
  for (const value of values) if (typeof value === "string") writable(value, keyword, at);
  const types = schema.type === undefined ? undefined : [schema.type].flat();
  if (types?.some((t) => typeof t !== "string" || !TYPES.includes(t))) {
    throw new Refusal("type", at, `type must be one of ${TYPES.join(", ")}.`);
  }
  const allowed = types ? values.filter((v) => types.some((t) => matchesType(v, t as string))) : values;
  if (allowed.length === 0) throw new Refusal(keyword, at, `No ${keyword} value has the schema's type.`);
  return { enum: [...new Set(allowed)] };
}

/**
 * A property name or string value the grammar writes as it is: the builder escapes quotes,
 * backslashes, tabs and line breaks in it, not the other control characters, which JSON does
 * not allow unescaped.
 */
function writable(text: string, keyword: string, at: string) {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is looked for
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(text)) {
    throw new Refusal(
      keyword,
      at,
      `${keyword} holds a control character (other than tab or a line break) in "${JSON.stringify(text).slice(1, -1)}".`,
    );
  }
}

function matchesType(value: unknown, type: string): boolean {
  if (type === "null") return value === null;
  if (type === "integer") return Number.isInteger(value);
  return typeof value === type;
}

/** Refuses a keyword of `schema` outside `allowed` and the descriptive ones. */
function only(schema: Record<string, unknown>, allowed: readonly string[], at: string, where: string) {
  for (const keyword of Object.keys(schema)) {
    if (allowed.includes(keyword) || DESCRIPTIVE_KEYWORDS.includes(keyword)) continue;
    throw new Refusal(keyword, at, `${describe(keyword)} is not supported ${where}.`);
  }
}

function describe(keyword: string): string {
  return `The keyword "${keyword}"`;
}

/** A length or count keyword: an integer from 0 to MAX_SCHEMA_BOUND. */
function bound(schema: Record<string, unknown>, keyword: string, at: string): number | undefined {
  const value = schema[keyword];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_SCHEMA_BOUND) {
    throw new Refusal(keyword, at, `${keyword} must be an integer from 0 to ${MAX_SCHEMA_BOUND}.`);
  }
  return value;
}

function defName(ref: unknown, at: string, defNames: ReadonlySet<string>): string {
  const prefix = typeof ref === "string" ? DEF_PREFIXES.find((p) => ref.startsWith(p)) : undefined;
  const name = prefix ? unescapePointer((ref as string).slice(prefix.length)) : undefined;
  if (name === undefined || !defNames.has(name)) {
    throw new Refusal(
      "$ref",
      at,
      'A $ref must point at a definition of the root: "#/$defs/<name>" or "#/definitions/<name>".',
    );
  }
  return name;
}

/** Any JSON value: the builder's any-JSON comes with an array's missing items. */
function anyJson(): GrammarJsonSchema {
  return {
    oneOf: [
      { type: ["string", "number", "boolean", "null"] },
      { type: "array" },
      { type: "object", additionalProperties: true },
    ],
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function escapePointer(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}

function unescapePointer(name: string): string {
  return name.replaceAll("~1", "/").replaceAll("~0", "~");
}
