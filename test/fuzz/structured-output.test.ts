import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkJsonSchema } from "../../src/domain/json-schema-subset.js";
import type { EngineContext, EngineModel } from "../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../src/workers/engine/llama-engine.js";
import { buildBenchModels } from "../../src/models/factory/bench-models.js";
import { wideVocabShape } from "../helpers/bench-shapes.js";
import { testModelDir } from "../helpers/test-models.js";

/**
 * The property of structured output: for random schemas of the supported subset, random seeds
 * and temperatures, a model that writes junk under the schema's grammar writes JSON that parses
 * and validates against the schema (ajv), whenever it ends by itself (finish reason "stop";
 * "length" means max tokens cut it, which docs/api.md says). Two models: hearth-tiny (one token
 * per byte) and random weights with the bench model's byte-level vocabulary of 49 152 tokens,
 * where many pieces are not whole UTF-8 (the tokens Hearth bans under a grammar,
 * grammar-token-bans.ts). `npm run fuzz` runs it long (HEARTH_FUZZ_RUNS); the suite runs a
 * bounded form.
 */

const RUNS = Number(process.env.HEARTH_FUZZ_RUNS ?? 30);
const SEED = process.env.HEARTH_FUZZ_SEED === undefined ? undefined : Number(process.env.HEARTH_FUZZ_SEED);
const settings = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: true };

type Schema = Record<string, unknown> | boolean;

/** Text with what JSON must escape: quotes, backslashes, control characters, non-ASCII. */
const awkwardText = fc.string({
  unit: fc.constantFrom("a", "Z", " ", '"', "\\", "\n", "\t", "é", "火", "😀", "/", "\r"),
  maxLength: 6,
});
const scalar = fc.oneof(
  awkwardText,
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.boolean(),
  fc.constant(null),
);
/** Descriptive keywords, which change nothing. */
const annotations = fc.record(
  { title: awkwardText, description: awkwardText, examples: fc.array(scalar, { maxLength: 2 }) },
  { requiredKeys: [] },
);
const count = fc.integer({ min: 0, max: 4 });

const schemas: fc.Arbitrary<Schema> = fc
  .letrec<{ schema: Schema; leaf: Schema }>((tie) => ({
    leaf: fc.oneof(
      fc.record(
        {
          type: fc.constant("string"),
          minLength: fc.integer({ min: 0, max: 3 }),
          maxLength: fc.integer({ min: 3, max: 12 }),
        },
        { requiredKeys: ["type", "maxLength"] },
      ),
      fc.constantFrom({ type: "integer" }, { type: "number" }, { type: "boolean" }, { type: "null" }),
      fc.record({ enum: fc.uniqueArray(scalar, { minLength: 1, maxLength: 4, comparator: "SameValueZero" }) }),
      fc.record({ const: scalar }),
      fc
        .subarray(["string", "number", "integer", "boolean", "null"], { minLength: 2 })
        .map((type) => ({ type, ...(type.includes("string") ? { maxLength: 8 } : {}) })),
    ),
    schema: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      tie("leaf"),
      fc
        .uniqueArray(fc.tuple(awkwardText, tie("schema")), { maxLength: 4, selector: ([name]) => name })
        .chain((entries) =>
          fc.record(
            {
              type: fc.constant("object"),
              properties: fc.constant(Object.fromEntries(entries)),
              required: fc.subarray(entries.map(([name]) => name)),
              additionalProperties: fc.constant(false),
            },
            { requiredKeys: ["type", "properties"] },
          ),
        ),
      fc.record(
        { type: fc.constant("object"), additionalProperties: tie("schema"), maxProperties: count },
        { requiredKeys: ["type", "additionalProperties"] },
      ),
      fc.record(
        {
          type: fc.constant("array"),
          items: tie("schema"),
          prefixItems: fc.array(tie("schema"), { minLength: 1, maxLength: 2 }),
          minItems: fc.integer({ min: 0, max: 2 }),
          maxItems: fc.integer({ min: 2, max: 4 }),
        },
        { requiredKeys: ["type", "maxItems"] },
      ),
      fc.record({ anyOf: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }) }),
      fc.constantFrom<Schema>({}, true),
    ),
  }))
  .schema.chain((schema) =>
    typeof schema === "boolean"
      ? fc.constant<Schema>(schema)
      : annotations.map((notes): Schema => ({ ...notes, ...schema })),
  );

/** A schema whose root defines something and refers to it. */
const withDefinitions = schemas.map((inner) => ({
  type: "object",
  properties: { first: { $ref: "#/$defs/inner" }, second: { $ref: "#/$defs/inner" } },
  $defs: { inner },
}));

const models = {
  "hearth-tiny": async () => path.join(testModelDir, "hearth-tiny.gguf"),
  "the bench model's vocabulary": async (dir: string) =>
    (await buildBenchModels(dir, { shape: wideVocabShape, adapters: 0 })).baseModel,
};

describe.each(Object.entries(models))("structured output (property) on %s", (_, modelPath) => {
  let dir: string;
  let engine: LlamaEngine;
  let model: EngineModel;
  let context: EngineContext;
  const ajv = new Ajv2020({ strict: false });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "hearth-structured-fuzz-"));
    engine = await LlamaEngine.create();
    model = await engine.loadModel({ id: "fuzzed", path: await modelPath(dir), threads: 1 });
    context = await model.createContext({ sequences: 1, contextSize: 1024, threads: 1 });
  });
  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
    await engine?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("writes JSON valid against any schema of the subset, at any seed and temperature", async () => {
    let ended = 0;
    let cut = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 4, arbitrary: schemas }, { weight: 1, arbitrary: withDefinitions }),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        async (schema, seed, temperature) => {
          const check = checkJsonSchema(schema);
          expect(check.ok, JSON.stringify(check)).toBe(true);
          let text = "";
          const result = await context.generate(
            {
              promptTokens: model.tokenize("JSON: "),
              sampling: { maxTokens: null, temperature, seed, stop: [], constraint: { type: "json_schema", schema } },
            },
            new AbortController().signal,
            (t) => (text += t),
          );
          if (result.finishReason === "length") {
            cut++;
            return;
          }
          ended++;
          expect(result.finishReason).toBe("stop");
          const validate = ajv.compile(typeof schema === "boolean" ? schema : structuredClone(schema));
          const value = JSON.parse(text);
          expect(validate(value), `${JSON.stringify(schema)}\n→ ${text}\n${JSON.stringify(validate.errors)}`).toBe(
            true,
          );
        },
      ),
      settings,
    );
    // Most values end well within the context; the property must not pass on cut outputs alone.
    expect(ended).toBeGreaterThan(cut);
  }, 600_000);
});
