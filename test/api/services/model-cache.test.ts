import { fileStorageDir } from "../../helpers/storage-dir.js";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../../src/auth/api-keys.js";
import { revokeApiKey } from "../../../src/db/queries/api-keys.js";
import { eventually } from "../../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { management, type Management } from "../../helpers/management.js";
import { testModelDir } from "../../helpers/test-models.js";

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");
const GGUF_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf");
const LONG_TTL = "600000";

/**
 * Two API processes on one database and one Redis (as replicas run), both caching model
 * resolutions and API-key checks for 10 minutes: whatever takes effect sooner does so
 * because of an invalidation, never because an entry expired. b's API-key checks last
 * 300 ms of a clock the test moves, so their expiry is a step of the test, not a wait.
 */
describe("model and API-key caches", () => {
  let a: TestHearth;
  let b: TestHearth;
  let onA: Management;
  let onB: Management;
  /** b's cache clock, in milliseconds: it moves only when the test moves it. */
  let bNow = 0;

  beforeAll(async () => {
    a = await startTestHearth({
      backend: "postgres",
      env: { HEARTH_MODEL_CACHE_TTL_MS: LONG_TTL, HEARTH_AUTH_CACHE_TTL_MS: LONG_TTL },
    });
    b = await startTestHearth({
      worker: false,
      now: () => bNow,
      env: {
        DATABASE_URL: a.config.databaseUrl!,
        HEARTH_REDIS_PREFIX: a.config.redisPrefix,
        HEARTH_STORAGE_DIR: fileStorageDir(a.config),
        HEARTH_ADMIN_KEY: a.apiKey,
        HEARTH_MODEL_CACHE_TTL_MS: LONG_TTL,
        HEARTH_AUTH_CACHE_TTL_MS: "300",
      },
    });
    onA = management(a, "default", a.apiKey);
    onB = management(b, "default", a.apiKey);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const post = async (hearth: TestHearth, route: string, body: unknown, key = a.apiKey) => {
    const res = await fetch(`${hearth.baseURL}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, body: (await res.json()) as any };
  };
  /**
   * Whether `model` resolves for inference, without running anything: embeddings of an
   * adapter are refused (400) after the model is resolved; a model that does not resolve is a 404.
   */
  const resolves = async (hearth: TestHearth, model: string) => {
    const r = await post(hearth, "/embeddings", { model, input: "x" });
    if (r.status === 400) return true;
    expect(r.status, JSON.stringify(r.body)).toBe(404);
    return false;
  };
  const chat = async (hearth: TestHearth, model: string) => {
    const r = await post(hearth, "/chat/completions", {
      model,
      messages: [{ role: "user", content: "Tell me" }],
      max_tokens: 16,
      temperature: 0,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.choices[0].message.content as string;
  };

  it("refuses a model at once after an undeploy in this process, and stays refused once the job is done", async () => {
    const name = await onA.deployFolder("local", PEFT_EXAMPLE);
    expect(await resolves(a, name)).toBe(true);
    expect((await onA.undeploy("local")).status).toBe(200);
    expect(await resolves(a, name)).toBe(false);
    await onA.waitForDeployment("local", null);
    expect(await resolves(a, name)).toBe(false);

    expect((await onA.deploy("local")).status).toBe(200);
    await onA.waitForDeployment("local", "DEPLOYED");
    expect(await resolves(a, name)).toBe(true);
    expect((await onA.call("DELETE", "/v1/accounts/default/models/local?force=true")).status).toBe(200);
    expect(await resolves(a, name)).toBe(false);
  });

  it("refuses a model in the other API process once it is undeployed or deleted through this one", async () => {
    const name = await onA.deployFolder("shared", PEFT_EXAMPLE);
    expect(await resolves(b, name)).toBe(true); // now cached in b
    expect((await onA.undeploy("shared")).status).toBe(200);
    await eventually(async () => expect(await resolves(b, name)).toBe(false));
    await onA.waitForDeployment("shared", null);
    expect(await resolves(b, name)).toBe(false);

    // Deployed again through b (its deploy job may run in either process), then deleted through a.
    expect((await onB.deploy("shared")).status).toBe(200);
    await onB.waitForDeployment("shared", "DEPLOYED");
    await eventually(async () => expect(await resolves(a, name)).toBe(true));
    expect(await resolves(b, name)).toBe(true);
    expect((await onA.call("DELETE", "/v1/accounts/default/models/shared?force=true")).status).toBe(200);
    expect(await resolves(a, name)).toBe(false);
    await eventually(async () => expect(await resolves(b, name)).toBe(false));
  });

  it("chats with a PATCHed chat template at once here, and in the other API process", async () => {
    const name = await onA.deployFolder("chatty", GGUF_EXAMPLE);
    const template =
      "{% for message in messages %}Q: {{ message.content }}\n{% endfor %}{% if add_generation_prompt %}A: a{% endif %}";
    // Both processes resolve (and cache) the model with its default template first.
    const before = await chat(a, name);
    expect(await chat(b, name)).toBe(before);

    expect(
      (await onA.call("PATCH", "/v1/accounts/default/models/chatty", { conversationConfig: { template } })).status,
    ).toBe(200);
    const after = await chat(a, name);
    expect(after).not.toBe(before); // greedy: only the prompt, so only the template, can change the text
    await eventually(async () => expect(await chat(b, name)).toBe(after));
  });

  it("stops accepting a revoked key within the API-key cache's TTL", async () => {
    const db = a.api.database.db;
    const { key, apiKey } = await issueApiKey(db, {
      accountId: "default",
      name: "soon-revoked",
      scopes: ["inference", "models"],
    });
    const whoami = async (hearth: TestHearth) =>
      (await fetch(`${hearth.baseURL}/whoami`, { headers: { authorization: `Bearer ${key}` } })).status;
    expect(await whoami(a)).toBe(200);
    expect(await whoami(b)).toBe(200);
    await revokeApiKey(db, { id: apiKey.id });
    // b caches checks for 300 ms of its clock: until then the revoked key still passes there,
    expect(await whoami(b)).toBe(200);
    // and once they are older, the revocation shows.
    bNow += 301;
    expect(await whoami(b)).toBe(401);
    // a caches them for 10 minutes (the revocation was made behind its back, by another process's means).
    expect(await whoami(a)).toBe(200);
  });
});
