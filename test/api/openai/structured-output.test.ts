import { Ajv2020 } from "ajv/dist/2020.js";
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";

const MODEL = "accounts/hearth/models/hearth-tiny";

const personSchema = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 12, description: "who" },
    age: { type: "integer" },
    pets: { type: "array", items: { enum: ["cat", "dog"] }, maxItems: 3 },
    nickname: { type: ["string", "null"], maxLength: 6 },
  },
  required: ["name", "age", "pets", "nickname"],
  additionalProperties: false,
  title: "Person",
};

// response_format through the official SDK: hearth-tiny writes junk, yet its output is always valid JSON under a grammar.
describe("structured output through the OpenAI SDK", () => {
  let hearth: TestHearth;
  let client: OpenAI;
  const validatePerson = new Ajv2020({ strict: false }).compile(personSchema);

  beforeAll(async () => {
    hearth = await startTestHearth();
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  const messages = [{ role: "user" as const, content: "Describe a person as JSON." }];

  it("answers json_object with a JSON object, streamed and not", async () => {
    const r = await client.chat.completions.create({
      model: MODEL,
      messages,
      response_format: { type: "json_object" },
      temperature: 1,
      seed: 3,
      max_tokens: 400,
    });
    expect(r.choices[0]!.finish_reason).toBe("stop");
    const value = JSON.parse(r.choices[0]!.message.content!);
    expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);

    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      response_format: { type: "json_object" },
      temperature: 1,
      seed: 3,
      max_tokens: 400,
      stream: true,
    });
    let text = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe("stop");
    // The same seed and request give the same object, in pieces.
    expect(text).toBe(r.choices[0]!.message.content);
  });

  // With a ban (-100) among the biases, node-llama-cpp's sampler once dropped the grammar: greedy
  // answers were NUL bytes. A ban is a finite bias now, and the grammar holds.
  it("holds the grammar beside logit_bias bans, and refuses typical_p beside it", async () => {
    const banned = ["{", '"', " "].map((c) => c.charCodeAt(0));
    for (const temperature of [0, 1]) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages,
        response_format: { type: "json_object" },
        logit_bias: Object.fromEntries(banned.slice(1).map((id) => [String(id), -100])),
        temperature,
        seed: 5,
        max_tokens: 400,
      });
      expect(r.choices[0]!.finish_reason).toBe("stop");
      const value = JSON.parse(r.choices[0]!.message.content!);
      expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
    }
    // Banning the only token the grammar allows first: the ban yields to the grammar.
    const forced = await client.chat.completions.create({
      model: MODEL,
      messages,
      response_format: { type: "json_object" },
      logit_bias: { [String(banned[0])]: -100 },
      temperature: 0,
      max_tokens: 400,
    });
    expect(forced.choices[0]!.message.content!.startsWith("{")).toBe(true);
    const typical = await client.chat.completions
      .create({ model: MODEL, messages, response_format: { type: "json_object" }, typical_p: 0.5 } as never)
      .catch((e: unknown) => e);
    expect(typical).toMatchObject({ status: 400, error: { param: "typical_p" } });
  });

  it("answers json_schema with values valid against the schema, for several seeds, streamed and not", async () => {
    const response_format = {
      type: "json_schema" as const,
      json_schema: { name: "person", schema: personSchema, strict: true },
    };
    for (const seed of [1, 2, 3]) {
      const r = await client.chat.completions.create({
        model: MODEL,
        messages,
        response_format,
        temperature: 1.2,
        seed,
        max_tokens: 400,
      });
      expect(r.choices[0]!.finish_reason).toBe("stop");
      const value = JSON.parse(r.choices[0]!.message.content!);
      expect(validatePerson(value), JSON.stringify(validatePerson.errors)).toBe(true);
    }
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      response_format,
      temperature: 0.7,
      seed: 9,
      max_tokens: 400,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(validatePerson(JSON.parse(text)), text).toBe(true);
  });

  it("parses with the SDK's zod helper", async () => {
    const Weather = z.object({
      city: z.string().max(10),
      celsius: z.number(),
      sky: z.enum(["clear", "cloudy", "rain"]),
      alerts: z.array(z.string().max(5)).max(2),
    });
    const r = await client.chat.completions.parse({
      model: MODEL,
      messages: [{ role: "user", content: "Weather?" }],
      response_format: zodResponseFormat(Weather, "weather"),
      temperature: 1,
      seed: 5,
      max_tokens: 400,
    });
    const parsed = r.choices[0]!.message.parsed;
    expect(Weather.parse(parsed)).toEqual(parsed);
  });

  it("accepts response_format on /v1/completions, and text as no constraint", async () => {
    const r = await client.completions.create({
      model: MODEL,
      prompt: "List: ",
      max_tokens: 200,
      temperature: 1,
      seed: 4,
      // response_format is not in the SDK's completion types; the SDK sends extra fields as they are.
      ...({
        response_format: {
          type: "json_schema",
          json_schema: { name: "list", schema: { type: "array", items: { type: "boolean" }, maxItems: 4 } },
        },
      } as object),
    });
    const value = JSON.parse(r.choices[0]!.text);
    expect(Array.isArray(value) && value.length <= 4 && value.every((v) => typeof v === "boolean")).toBe(true);
    const free = await client.completions.create({
      model: MODEL,
      prompt: "List: ",
      max_tokens: 8,
      temperature: 0,
      ...({ response_format: { type: "text" } } as object),
    });
    expect(free.choices[0]!.finish_reason).toBe("length");
  });

  it("follows a GBNF grammar", async () => {
    const r = await client.chat.completions.create({
      model: MODEL,
      messages,
      temperature: 1.5,
      seed: 2,
      max_tokens: 50,
      // The grammar type is Hearth's; the SDK sends it as given.
      response_format: { type: "grammar", grammar: 'root ::= ("yes" | "no") ", " [a-z]{2,4} "."' } as never,
    });
    expect(r.choices[0]!.message.content).toMatch(/^(yes|no), [a-z]{2,4}\.$/);
    expect(r.choices[0]!.finish_reason).toBe("stop");
  });

  it("ends with finish_reason length when max_tokens cuts the value short", async () => {
    const r = await client.chat.completions.create({
      model: MODEL,
      messages,
      response_format: {
        type: "json_schema",
        json_schema: { name: "long", schema: { type: "array", minItems: 50, items: { type: "integer" } } },
      },
      max_tokens: 5,
    });
    expect(r.choices[0]!.finish_reason).toBe("length");
  });

  async function refusal(body: Record<string, unknown>) {
    const error = await client.chat.completions
      .create({ model: MODEL, messages, max_tokens: 20, ...body } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    return error as InstanceType<typeof OpenAI.BadRequestError>;
  }

  it("refuses a keyword it cannot enforce, naming it, and a grammar that does not parse, as 400s", async () => {
    const withMinimum = await refusal({
      response_format: {
        type: "json_schema",
        json_schema: { name: "n", schema: { type: "object", properties: { n: { type: "number", minimum: 0 } } } },
      },
    });
    expect(withMinimum.param).toBe("response_format");
    expect(withMinimum.message).toMatch(/\/properties\/n.*"minimum"/);
    const oneOf = await refusal({
      response_format: { type: "json_schema", json_schema: { name: "o", schema: { oneOf: [{ type: "string" }] } } },
    });
    expect(oneOf.message).toMatch(/anyOf/);
    const badGrammar = await refusal({ response_format: { type: "grammar", grammar: "root ::= missing-rule" } });
    expect(badGrammar.param).toBe("response_format");
    expect(badGrammar.message).toMatch(/does not parse/);
    // llama.cpp would spend seconds, then minutes, on each token of this one (docs/security.md, "Grammars").
    const ambiguous = await refusal({
      response_format: { type: "grammar", grammar: 'root ::= (("a"{0,30}){0,30}){0,30}' },
    });
    expect(ambiguous.param).toBe("response_format");
    expect(ambiguous.message).toMatch(/too ambiguous/);
    const unknownType = await refusal({ response_format: { type: "xml" } });
    expect(unknownType.param).toBe("response_format.type");
    const withStop = await refusal({ response_format: { type: "json_object" }, stop: ["}"] });
    expect(withStop.param).toBe("stop");
  });
});
