import { fileStorageDir } from "../helpers/storage-dir.js";
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractRoutes } from "../../src/api/contract/document.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount, type Management } from "../helpers/management.js";
import { testModelDir } from "../helpers/test-models.js";

/**
 * One account never reaches another's resources (docs/security.md): every operation of the
 * contract that names an account, a model or a stream, called with another account's key
 * (every scope but admin) on the victim's own resources, answers 404 (or 403 where the
 * operation is the admin's), and afterwards nothing in the database or in storage has changed.
 */

const VICTIM_MODEL = "accounts/victim/models/secret";

/** A body that would do something if the route let it. */
function bodyFor(method: string, route: string): unknown {
  if (route.endsWith("/files/{file_name}") && method === "put") return "{}";
  if (route === "/v1/accounts/{account_id}/models" && method === "post") return { modelId: "planted" };
  if (method === "patch" && route.startsWith("/v1/admin/")) return { limits: { maxModels: 1_000_000 } };
  if (method === "patch") return { displayName: "taken over" };
  if (route.startsWith("/v1/image_generation")) return { prompt: "a hearth" };
  if (route === "/v1/completions") return { model: VICTIM_MODEL, prompt: "Hi", max_tokens: 2 };
  if (route === "/v1/chat/completions") return { model: VICTIM_MODEL, messages: [{ role: "user", content: "Hi" }] };
  if (route === "/v1/embeddings") return { model: VICTIM_MODEL, input: "Hi" };
  if (route.startsWith("/v1/admin/") && method === "post") return { accountId: "planted", scopes: ["admin"] };
  if (route.endsWith("/api-keys") && method === "post") return { name: "planted", scopes: ["inference"] };
  return undefined;
}

describe("the isolation matrix", () => {
  let hearth: TestHearth;
  let victim: Management;
  let intruder: Management;
  let victimStream: string;
  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_AUTH_CACHE_TTL_MS: "0" } });
    victim = await createTestAccount(hearth, "victim");
    intruder = await createTestAccount(hearth, "intruder");
    // The victim's model, deployed, and one of its streams (resumable for a while).
    await victim.deployFolder("secret", path.join(testModelDir, "examples", "hearth-tiny-lora"));
    const stream = await fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${victim.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: VICTIM_MODEL, prompt: "Hi", max_tokens: 4, stream: true }),
    });
    victimStream = stream.headers.get("x-request-id")!;
    await stream.text();
  }, 60_000);
  afterAll(() => hearth?.close());

  /** Everything the database and storage hold, to compare before and after. */
  async function snapshot() {
    const db = hearth.api.database.db;
    const tables: Record<string, unknown> = {};
    for (const table of ["accounts", "api_keys", "models", "deployments"]) {
      // last_used_at moves with every authenticated request; it is not what an intruder could change.
      const rows = await db.execute(`select * from ${table} order by 1, 2`);
      tables[table] = (rows as unknown as { rows: Record<string, unknown>[] }).rows.map(
        ({ last_used_at, ...row }) => row,
      );
    }
    const dir = fileStorageDir(hearth.config);
    const files: Record<string, string> = {};
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      files[path.relative(dir, file)] = createHash("sha256")
        .update(await readFile(file))
        .digest("hex");
    }
    return { tables, files };
  }

  /** The multipart image operations, with a real image. */
  async function postForm(url: string, control: boolean) {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#a33" } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set("prompt", "a hearth");
    form.set(control ? "control_image" : "init_image", new Blob([new Uint8Array(png)], { type: "image/png" }), "a.png");
    if (control) form.set("control_net_name", "canny");
    const response = await fetch(`${hearth.url}${url}`, {
      method: "POST",
      headers: { authorization: `Bearer ${intruder.apiKey}` },
      body: form,
    });
    return { status: response.status, body: (await response.json()) as { error: { code: string; message: string } } };
  }

  it("answers 404 (403 for the admin's operations) on every route, and changes nothing", async () => {
    const before = await snapshot();
    const checked: string[] = [];
    for (const route of contractRoutes) {
      const names = /\{(account_id|model_id|request_id)\}|^\/v1\/(completions|chat|embeddings)/.test(route.path);
      if (!names) continue;
      const url = route.path
        .replace("{account_id}", "victim")
        .replace("{model_id}", "secret")
        .replace("{file_name}", "adapter_config.json")
        .replace("{request_id}", victimStream)
        .replace("{prefix}", victim.apiKey.slice(0, 12));
      const form = /\/(image_to_image|control_net)$/.test(route.path);
      const reply = form
        ? await postForm(url, route.path.endsWith("control_net"))
        : await intruder.call(route.method.toUpperCase(), url, bodyFor(route.method, route.path));
      const where = `${route.method.toUpperCase()} ${url}`;
      const expected = route.path.startsWith("/v1/admin/") ? 403 : 404;
      expect(reply.status, `${where}: ${JSON.stringify(reply.body)}`).toBe(expected);
      expect(reply.body.error.code, where).toBe(expected === 403 ? "forbidden" : "not_found");
      // A 404 says nothing about whether the resource exists.
      expect(JSON.stringify(reply.body), where).not.toContain("DEPLOYED");
      checked.push(where);
    }
    expect(checked.length).toBeGreaterThanOrEqual(20);
    // The model the victim owns reads the same as one that does not exist.
    const missing = await intruder.call("GET", "/v1/accounts/victim/models/never-was");
    const real = await intruder.call("GET", "/v1/accounts/victim/models/secret");
    expect(real.body.error.message.replace("secret", "never-was")).toBe(missing.body.error.message);
    expect(await snapshot()).toEqual(before);
    // And the victim still has everything.
    expect((await victim.getModel("secret")).body).toMatchObject({ state: "READY", deployment: { state: "DEPLOYED" } });
  });
});
