import fc from "fast-check";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { defaultAccount, type Management, type Reply } from "../helpers/management.js";
import { greedyText } from "../helpers/oracle.js";

/**
 * Property-based fuzzing (fast-check) of the HTTP API, against a real Hearth with a real
 * worker: every JSON endpoint with bodies that are valid ones mutated (fields dropped, replaced
 * by any JSON, keys added), the upload and validate path with random safetensors headers and
 * GGUF files, and the multipart image endpoints with random fields and bytes. Properties:
 * never a 5xx; every error a JSON error body; and afterwards the server still answers, and
 * answers right. `npm run fuzz` runs it long (HEARTH_FUZZ_RUNS); the suite runs a bounded form.
 */

const RUNS = Number(process.env.HEARTH_FUZZ_RUNS ?? 40);
const SEED = process.env.HEARTH_FUZZ_SEED === undefined ? undefined : Number(process.env.HEARTH_FUZZ_SEED);
const settings = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: true };

/** Never a 5xx; an error is OpenAI's JSON error body. */
function expectWellFormed(reply: Reply, what: string): void {
  expect(reply.status, `${what} → ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`).toBeLessThan(500);
  if (reply.status >= 400) {
    expect(reply.body, what).toMatchObject({
      error: { message: expect.any(String), type: expect.any(String), code: expect.any(String) },
    });
  }
}

const anyJson = fc.jsonValue({ maxDepth: 3 });

/** A valid body, mutated: some fields dropped, some replaced with any JSON, maybe one added. */
function mutated(template: Record<string, unknown>) {
  const keys = Object.keys(template);
  return fc
    .record({
      drop: fc.subarray(keys),
      replace: fc.dictionary(fc.constantFrom(...keys), anyJson, { maxKeys: 2 }),
      extra: fc.option(fc.tuple(fc.string({ maxLength: 12 }), anyJson), { nil: undefined }),
    })
    .map(({ drop, replace, extra }) => {
      const body: Record<string, unknown> = { ...template, ...replace };
      for (const key of drop) delete body[key];
      if (extra) body[extra[0]] = extra[1];
      return body;
    });
}

/** Any body at all: a mutated valid one mostly, else any JSON value, else text that is not JSON. */
function bodies(template: Record<string, unknown>) {
  return fc.oneof(
    { weight: 6, arbitrary: mutated(template) },
    { weight: 2, arbitrary: anyJson },
    { weight: 1, arbitrary: fc.string({ maxLength: 64 }).map((text) => ({ raw: text })) },
  );
}

describe("fuzzing the API", () => {
  let hearth: TestHearth;
  let admin: Management;
  let models = 0;
  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_AUTH_CACHE_TTL_MS: "0", HEARTH_QUEUE_TIMEOUT_MS: "5000" } });
    admin = defaultAccount(hearth);
    expect((await admin.call("POST", "/v1/admin/accounts", { accountId: "fuzz-target" })).status).toBe(200);
    expect((await admin.createModel("fz-patched", { baseModel: HEARTH_TINY_REF })).status).toBe(201);
  });
  afterAll(() => hearth?.close());

  const send = (method: string, route: string, body: unknown) =>
    body !== null && typeof body === "object" && "raw" in (body as object)
      ? admin.call(method, route, (body as { raw: string }).raw, { "content-type": "application/json" })
      : admin.call(method, route, body);

  /** The server answers, and answers right: the greedy completion is the oracle's, token for token. */
  async function stillRight() {
    expect((await fetch(`${hearth.url}/healthz`)).status).toBe(200);
    const reply = await admin.call("POST", "/v1/completions", {
      model: HEARTH_TINY_REF,
      prompt: "The ",
      max_tokens: 8,
      temperature: 0,
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.choices[0].text).toBe(greedyText("The ", 8));
  }

  const jsonEndpoints: [string, string, Record<string, unknown>][] = [
    [
      "POST",
      "/v1/completions",
      { model: HEARTH_TINY_REF, prompt: "Hi", max_tokens: 3, temperature: 0.5, stop: ["\n"], n: 1, seed: 7 },
    ],
    [
      "POST",
      "/v1/chat/completions",
      { model: HEARTH_TINY_REF, messages: [{ role: "user", content: "Hi" }], max_tokens: 3, stream: false },
    ],
    ["POST", "/v1/embeddings", { model: HEARTH_TINY_REF, input: ["a", "b"], encoding_format: "float" }],
    ["POST", "/v1/accounts/default/models", { modelId: "fz-new", model: { baseModel: HEARTH_TINY_REF } }],
    [
      "PATCH",
      "/v1/accounts/default/models/fz-patched",
      { displayName: "x", description: "y", conversationConfig: { template: "{{ messages[0].content }}" } },
    ],
    ["PATCH", "/v1/admin/accounts/fuzz-target", { displayName: "t", limits: { requestsPerMinute: 50 } }],
    ["POST", "/v1/admin/accounts/fuzz-target/api-keys", { name: "k", scopes: ["inference"] }],
    ["POST", "/v1/admin/accounts", { accountId: "fz-acct", displayName: "d" }],
    [
      "POST",
      "/v1/image_generation/accounts/hearth/models/hearth-sketch",
      { prompt: "a hearth", steps: 2, width: 64, height: 64, samples: 1, seed: 3 },
    ],
  ];

  it("answers every JSON endpoint with a status below 500 and a JSON error body", async () => {
    for (const [method, route, template] of jsonEndpoints) {
      await fc.assert(
        fc.asyncProperty(bodies(template), async (body) => {
          expectWellFormed(await send(method, route, body), `${method} ${route} ${JSON.stringify(body)}`);
        }),
        settings,
      );
    }
    // Path and query parameters of any shape.
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "DELETE", "POST"),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        async (method, id, query) => {
          const route = `/v1/accounts/default/models/${encodeURIComponent(id)}${method === "POST" ? "/deploy" : ""}`;
          expectWellFormed(await admin.call(method, `${route}?${encodeURIComponent(query)}`), `${method} ${route}`);
          const list = `/v1/accounts/default/models?filter=${encodeURIComponent(id)}&pageSize=${encodeURIComponent(query)}`;
          expectWellFormed(await admin.call("GET", list), `GET ${list}`);
        },
      ),
      settings,
    );
    await stillRight();
  }, 600_000);

  /** A safetensors file: its header any JSON object (mostly a LoRA's, mutated), its data any bytes. */
  const safetensors = fc
    .tuple(
      fc.oneof(
        mutated({
          "base_model.model.lm_head.lora_A.weight": { dtype: "F32", shape: [4, 64], data_offsets: [0, 1024] },
          "base_model.model.lm_head.lora_B.weight": { dtype: "F32", shape: [256, 4], data_offsets: [1024, 5120] },
          __metadata__: { format: "pt" },
        }),
        fc.dictionary(fc.string({ maxLength: 50 }), anyJson, { maxKeys: 4 }),
      ),
      fc.uint8Array({ maxLength: 6000 }),
      fc.option(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { nil: undefined }),
    )
    .map(([header, data, declared]) => {
      const json = Buffer.from(JSON.stringify(header));
      const length = Buffer.alloc(8);
      length.writeBigUInt64LE(declared ?? BigInt(json.length));
      return Buffer.concat([length, json, Buffer.from(data)]);
    });

  /** A GGUF file: its magic and version right or not, then counts and bytes of any kind. */
  const gguf = fc
    .tuple(
      fc.constantFrom("GGUF", "GGUF", "GGML", "\0\0\0\0"),
      fc.constantFrom(3, 3, 2, 1, 0xffffffff),
      fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      fc.uint8Array({ maxLength: 4000 }),
    )
    .map(([magic, version, tensors, entries, rest]) => {
      const head = Buffer.alloc(24);
      head.write(magic, 0, "latin1");
      head.writeUInt32LE(version, 4);
      head.writeBigUInt64LE(tensors, 8);
      head.writeBigUInt64LE(entries, 16);
      return Buffer.concat([head, Buffer.from(rest)]);
    });

  const peftConfig = mutated({
    r: 4,
    lora_alpha: 8,
    target_modules: ["lm_head"],
    peft_type: "LORA",
    base_model_name_or_path: HEARTH_TINY_REF,
  });

  it("uploads and validates random adapters without a 5xx, leaving each model READY or FAILED", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ kind: fc.constant("peft" as const), config: peftConfig, weights: safetensors }),
          fc.record({ kind: fc.constant("gguf" as const), file: gguf }),
        ),
        async (addon) => {
          const modelId = `fz-up-${models++}`;
          expect((await admin.createModel(modelId, { baseModel: HEARTH_TINY_REF })).status).toBe(201);
          const uploads =
            addon.kind === "peft"
              ? [
                  await admin.upload(modelId, "adapter_config.json", JSON.stringify(addon.config)),
                  await admin.upload(modelId, "adapter_model.safetensors", addon.weights),
                ]
              : [await admin.upload(modelId, "adapter.gguf", addon.file)];
          for (const upload of uploads) expectWellFormed(upload, `upload to ${modelId}`);
          const validated = await admin.validate(modelId);
          expectWellFormed(validated, `validate ${modelId}`);
          const state = (await admin.getModel(modelId)).body.state;
          expect(["READY", "FAILED", "UPLOADING"]).toContain(state);
          expectWellFormed(await admin.call("DELETE", `/v1/accounts/default/models/${modelId}`), `delete ${modelId}`);
        },
      ),
      settings,
    );
    await stillRight();
  }, 600_000);

  it("answers the multipart image endpoints with random fields and bytes without a 5xx", async () => {
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#c62" } })
      .png()
      .toBuffer();
    const field = fc.oneof(fc.string({ maxLength: 12 }), fc.integer().map(String), fc.constant(""));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("image_to_image", "control_net"),
        fc.dictionary(
          fc.constantFrom(
            "prompt",
            "steps",
            "width",
            "height",
            "image_strength",
            "init_image_mode",
            "control_net_name",
            "conditioning_scale",
            "samples",
            "bogus",
          ),
          field,
          { maxKeys: 5 },
        ),
        fc.oneof(
          fc.constant(png),
          fc.uint8Array({ maxLength: 3000 }).map((b) => Buffer.from(b)),
          fc.constant(null),
        ),
        async (kind, fields, image) => {
          const form = new FormData();
          for (const [name, value] of Object.entries({ prompt: "a hearth", steps: "2", ...fields }))
            form.set(name, value);
          if (image) {
            const name = kind === "control_net" ? "control_image" : "init_image";
            form.set(name, new Blob([new Uint8Array(image)], { type: "image/png" }), "x.png");
          }
          const response = await fetch(
            `${hearth.url}/v1/image_generation/accounts/hearth/models/hearth-sketch/${kind}`,
            {
              method: "POST",
              headers: { authorization: `Bearer ${hearth.apiKey}`, accept: "application/json" },
              body: form,
            },
          );
          const text = await response.text();
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // an image
          }
          expectWellFormed(
            { status: response.status, body, headers: response.headers },
            `${kind} ${JSON.stringify(fields)}`,
          );
        },
      ),
      settings,
    );
    await stillRight();
  }, 600_000);
});
