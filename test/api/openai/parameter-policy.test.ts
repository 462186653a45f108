import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Endpoint, PARAMETER_POLICY } from "../../../src/api/contract/openai/parameter-policy.js";
import {
  chatRequestSchema,
  completionRequestSchema,
  embeddingRequestSchema,
} from "../../../src/api/contract/openai/requests.js";
import { parameterTable } from "../../../src/api/contract/parameter-table.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";

/**
 * No silent drops (docs/api.md, "Every parameter"): each parameter a client may send is
 * honoured, on the short list of those that change nothing, or refused with a 400 naming it.
 * The walk takes the OpenAI SDK's own request types (so a parameter the SDK gains is caught
 * here) and the extra parameters of hosted services of this kind (Fireworks' sampling and
 * prompt options).
 */

const MODEL = "accounts/hearth/models/hearth-tiny";

/** The top-level fields of an interface in the installed openai SDK's type declarations. */
async function sdkParameters(file: string, name: string): Promise<string[]> {
  // The SDK's entry point is at its package's root.
  const root = path.dirname(createRequire(import.meta.url).resolve("openai"));
  const text = await readFile(path.join(root, file), "utf8");
  const start = text.indexOf(`export interface ${name} {`);
  expect(start, `${name} in ${file}`).toBeGreaterThan(-1);
  const body = text.slice(start, text.indexOf("\n}\n", start));
  return [...body.matchAll(/^ {4}([a-z_]+)\??:/gm)].map((m) => m[1]!);
}

const HOSTED = [
  "top_k",
  "min_p",
  "typical_p",
  "repetition_penalty",
  "mirostat_target",
  "mirostat_lr",
  "context_length_exceeded_behavior",
  "prompt_truncate_len",
  "raw_output",
  "echo_last",
  "ignore_eos",
  "perf_metrics_in_response",
  "prompt_cache_max_len",
  "return_token_ids",
];

const SCHEMAS: Record<Endpoint, { shape: Record<string, unknown> }> = {
  completions: completionRequestSchema,
  chat: chatRequestSchema,
  embeddings: embeddingRequestSchema,
};

const ROUTES: Record<Endpoint, { path: string; base: Record<string, unknown> }> = {
  completions: { path: "/completions", base: { model: MODEL, prompt: "The ", max_tokens: 4, temperature: 0 } },
  chat: {
    path: "/chat/completions",
    base: { model: MODEL, messages: [{ role: "user", content: "Hi" }], max_tokens: 4, temperature: 0 },
  },
  embeddings: { path: "/embeddings", base: { model: MODEL, input: "hello" } },
};

/**
 * A valid value asking for something, for each honoured parameter (the base request's own are
 * kept), or the fields to send for it where it needs others or differs by endpoint.
 */
const HONOURED_WITH: Record<string, (endpoint: Endpoint) => Record<string, unknown>> = {
  logprobs: (endpoint) => ({ logprobs: endpoint === "chat" ? true : 2 }),
  top_logprobs: () => ({ logprobs: true, top_logprobs: 2 }),
  tools: () => ({ tools: [LOOKUP] }),
  tool_choice: () => ({ tools: [LOOKUP], tool_choice: "required" }),
  parallel_tool_calls: () => ({ tools: [LOOKUP], tool_choice: "required", parallel_tool_calls: false }),
};
const LOOKUP = {
  type: "function",
  function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string", maxLength: 4 } } } },
};
const HONOURED_SAMPLES: Record<string, unknown> = {
  echo: true,
  typical_p: 0.9,
  logit_bias: { "65": 5 },
  context_length_exceeded_behavior: "truncate",
  max_completion_tokens: 3,
  top_p: 0.9,
  top_k: 5,
  min_p: 0.1,
  seed: 7,
  n: 2,
  stop: ["\n"],
  stream: false,
  stream_options: { include_usage: true },
  presence_penalty: 0.5,
  frequency_penalty: 0.5,
  repetition_penalty: 1.1,
  response_format: { type: "text" },
  dimensions: 8,
  encoding_format: "base64",
};

const NO_EFFECT_SAMPLES: Record<string, unknown> = {
  user: "user-1",
  safety_identifier: "user-1",
  metadata: { project: "eval" },
  store: true,
  service_tier: "auto",
  prompt_cache_key: "tenant-1",
  prompt_cache_retention: "24h",
  prompt_cache_options: {},
};

/** Values that ask for nothing, accepted for a refused parameter. */
const OFF_SAMPLES: Record<string, unknown[]> = {
  modalities: [["text"]],
  best_of: [1],
};

const walk: Record<Endpoint, string[]> = { completions: [], chat: [], embeddings: [] };

describe("no parameter is dropped silently", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    walk.completions = [
      ...(await sdkParameters("resources/completions.d.ts", "CompletionCreateParamsBase")),
      ...HOSTED,
    ];
    walk.chat = [
      ...(await sdkParameters("resources/chat/completions/completions.d.ts", "ChatCompletionCreateParamsBase")),
      ...HOSTED,
    ];
    walk.embeddings = await sdkParameters("resources/embeddings.d.ts", "EmbeddingCreateParams");
    hearth = await startTestHearth();
  });
  afterAll(() => hearth?.close());

  const send = async (endpoint: Endpoint, extra: Record<string, unknown>) => {
    const r = await fetch(`${hearth.baseURL}${ROUTES[endpoint].path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ ...ROUTES[endpoint].base, ...extra }),
    });
    return { status: r.status, body: (await r.json()) as any };
  };

  it("walks enough parameters to mean something", () => {
    expect(walk.completions.length).toBeGreaterThan(25);
    expect(walk.chat.length).toBeGreaterThan(45);
    expect(walk.embeddings).toEqual(
      expect.arrayContaining(["input", "model", "dimensions", "encoding_format", "user"]),
    );
  });

  for (const endpoint of Object.keys(ROUTES) as Endpoint[]) {
    it(`${endpoint}: each parameter is declared, and does what its status says`, async () => {
      const shape = SCHEMAS[endpoint].shape;
      const rules = PARAMETER_POLICY[endpoint];
      const baseline = await send(endpoint, {});
      expect(baseline.status, JSON.stringify(baseline.body)).toBe(200);
      for (const name of new Set(walk[endpoint])) {
        expect(Object.hasOwn(shape, name), `${endpoint}: ${name} is neither honoured nor in the policy`).toBe(true);
        if (Object.hasOwn(ROUTES[endpoint].base, name)) continue;
        const rule = rules[name];
        if (!rule) {
          const fields = HONOURED_WITH[name]?.(endpoint) ?? { [name]: HONOURED_SAMPLES[name] };
          expect(fields[name], `a sample value of honoured ${name}`).toBeDefined();
          const r = await send(endpoint, fields);
          expect(r.status, `${endpoint} ${name}: ${JSON.stringify(r.body)}`).toBe(200);
        } else if (rule.status === "no effect") {
          const r = await send(endpoint, { [name]: NO_EFFECT_SAMPLES[name] });
          expect(r.status, `${endpoint} ${name}: ${JSON.stringify(r.body)}`).toBe(200);
          // It changes nothing: the same greedy answer as without it.
          expect(r.body.choices ?? r.body.data, `${endpoint} ${name}`).toEqual(
            baseline.body.choices ?? baseline.body.data,
          );
        } else {
          const r = await send(endpoint, { [name]: name === "modalities" ? ["audio"] : 2 });
          expect(r.status, `${endpoint} ${name}: ${JSON.stringify(r.body)}`).toBe(400);
          expect(r.body.error).toMatchObject({ param: name, type: "invalid_request_error" });
          expect(r.body.error.message).toBe(`${name} is not supported: ${rule.why}`);
          for (const off of [null, false, ...(OFF_SAMPLES[name] ?? [])]) {
            const accepted = await send(endpoint, { [name]: off });
            expect(
              accepted.status,
              `${endpoint} ${name}=${JSON.stringify(off)}: ${JSON.stringify(accepted.body)}`,
            ).toBe(200);
          }
        }
      }
    });
  }

  it("refuses a parameter it does not know, naming it", async () => {
    for (const endpoint of Object.keys(ROUTES) as Endpoint[]) {
      const r = await send(endpoint, { temprature: 0.5 });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ param: "temprature", type: "invalid_request_error" });
      expect(r.body.error.message).toMatch(/^Unknown parameter: temprature\./);
    }
  });

  it("is the table docs/api.md shows", async () => {
    const doc = await readFile(new URL("../../../docs/api.md", import.meta.url), "utf8");
    expect(doc).toContain(parameterTable());
  });
});
