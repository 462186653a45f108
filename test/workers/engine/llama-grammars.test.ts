import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutputConstraint, Sampling } from "../../../src/domain/generation.js";
import type { EngineContext, EngineModel } from "../../../src/workers/engine/engine.js";
import { LlamaEngine } from "../../../src/workers/engine/llama-engine.js";
import { jsonGrammarText } from "../../../src/workers/engine/llama-grammars.js";
import { testModelDir } from "../../helpers/test-models.js";

const sampling = (constraint: OutputConstraint, extra: Partial<Sampling> = {}): Sampling => ({
  maxTokens: 400,
  temperature: 1,
  seed: 7,
  stop: [],
  constraint,
  ...extra,
});

// Grammars on real node-llama-cpp: hearth-tiny writes junk, yet under a grammar its output has the grammar's shape.
describe("output constraints in LlamaEngine", () => {
  let engine: LlamaEngine;
  let tiny: EngineModel;
  let context: EngineContext;

  beforeAll(async () => {
    engine = await LlamaEngine.create();
    tiny = await engine.loadModel({ id: "hearth-tiny", path: path.join(testModelDir, "hearth-tiny.gguf"), threads: 1 });
    context = await tiny.createContext({ sequences: 2, contextSize: 512, threads: 1 });
  });
  afterAll(async () => {
    await context?.dispose();
    await tiny?.dispose();
    await engine?.close();
  });

  async function run(s: Sampling, prompt = "Once upon a time ", extraStop?: string[]) {
    let text = "";
    const result = await context.generate(
      { promptTokens: tiny.tokenize(prompt), sampling: s, extraStop },
      new AbortController().signal,
      (t) => (text += t),
    );
    return { text, ...result };
  }

  it("ends with a value valid against the schema, at the grammar's end", async () => {
    const schema = {
      type: "object",
      properties: {
        count: { type: "integer" },
        name: { type: "string", maxLength: 8 },
        tags: { type: "array", items: { enum: ["a", 'b"', 3, null] }, maxItems: 3 },
        ratio: { type: ["number", "null"] },
      },
      required: ["count"],
    };
    const validate = new Ajv2020({ strict: false }).compile(schema);
    for (const seed of [1, 2, 3, 4]) {
      // A template stop string that the value could contain is not applied under a grammar.
      const r = await run(sampling({ type: "json_schema", schema }, { seed }), "Once ", ["a"]);
      expect(r.finishReason).toBe("stop");
      const value = JSON.parse(r.text);
      expect(validate(value), `${r.text}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("follows a GBNF grammar, greedy or not", async () => {
    const grammar = 'root ::= "yes" | "no" | "maybe " [a-z]{1,5}';
    for (const temperature of [0, 1.5]) {
      const r = await run(sampling({ type: "gbnf", grammar }, { temperature }));
      expect(r.text).toMatch(/^(yes|no|maybe [a-z]{1,5})$/);
      expect(r.finishReason).toBe("stop");
    }
  });

  it("samples greedily below a temperature of 1e-5, where dividing the logits would overflow", async () => {
    // Found by the structured-output fuzz: at 1.1e-41 the draw was from NaNs and ended at once, empty.
    const constraint: OutputConstraint = { type: "json_schema", schema: { anyOf: [{ type: "integer" }, true] } };
    const greedy = await run(sampling(constraint, { temperature: 0 }), "JSON: ");
    expect(greedy.text).not.toBe("");
    for (const temperature of [1.115530411665967e-41, 1e-20, 9e-6]) {
      const r = await run(sampling(constraint, { temperature, seed: 1149125775 }), "JSON: ");
      expect(r).toMatchObject({ text: greedy.text, finishReason: "stop" });
    }
  });

  it("stops at max_tokens with finish reason length, cut short", async () => {
    const r = await run(sampling({ type: "gbnf", grammar: 'root ::= "x"+' }, { maxTokens: 5, temperature: 0 }));
    expect(r).toMatchObject({ text: "xxxxx", finishReason: "length", completionTokens: 5 });
  });

  it("refuses a grammar that does not parse, or a schema outside the subset, as a 400 naming response_format", async () => {
    const ambiguous = 'root ::= r\nr ::= "a" r "b" | "a" r "c" | "a" r "d" | "x"';
    for (const grammar of ["root ::= undefined-rule", 'root ::= "open', 'root ::= root "a"', ambiguous]) {
      await expect(run(sampling({ type: "gbnf", grammar }))).rejects.toMatchObject({
        code: "invalid_request",
        param: "response_format",
      });
    }
    await expect(run(sampling({ type: "json_schema", schema: { type: "number", minimum: 1 } }))).rejects.toMatchObject({
      code: "invalid_request",
      param: "response_format",
      message: expect.stringContaining('"minimum"'),
    });
    // An integer bound tighter than the grammar's own digits is refused; the safe-integer range
    // zod gives every integer is wider, and taken: the integers written stay within it.
    await expect(
      run(sampling({ type: "json_schema", schema: { type: "integer", maximum: 100 } })),
    ).rejects.toMatchObject({
      param: "response_format",
      message: expect.stringContaining('"maximum"'),
    });
    const safe = { type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
    for (const seed of [1, 2, 3]) {
      const written = await run(sampling({ type: "json_schema", schema: safe }, { temperature: 1.5, seed }));
      expect(written.finishReason).toBe("stop");
      expect(Number.isSafeInteger(JSON.parse(written.text))).toBe(true);
    }
    // The context still serves after the refusals.
    const r = await run(sampling({ type: "gbnf", grammar: 'root ::= "ok"' }));
    expect(r.text).toBe("ok");
  });
});

describe("jsonGrammarText", () => {
  it("ends the grammar at the value and narrows node-llama-cpp's number and escape rules", async () => {
    const { getLlama } = await import("node-llama-cpp");
    const llama = await getLlama({ build: "never", gpu: false, progressLogs: false });
    try {
      const built = await llama.createGrammarForJsonSchema({
        type: "object",
        properties: { i: { type: "integer" }, n: { type: "number" }, s: { type: "string" } },
      });
      const text = jsonGrammarText(built.grammar);
      expect(text.split("\n")[0]).toMatch(/"}"$/);
      expect(text).toContain('integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,14})\n');
      expect(text).not.toContain("[0-9a-fA-F]{4}");
      await llama.createGrammar({ grammar: text });
      expect(() => jsonGrammarText(built.grammar.replace("[\\n]*", "[\\n]+"))).toThrow(/needs updating/);
    } finally {
      await llama.dispose();
    }
  });
});
