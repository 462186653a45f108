import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { issueApiKey } from "../../src/auth/api-keys.js";
import type { ApiKeyScope } from "../../src/domain/vocabulary.js";
import { createAccount } from "../../src/db/queries/accounts.js";
import type { TestHearth } from "./hearth.js";

/** A small HTTP client of the management API for tests (raw status and body, so errors can be checked). */
export interface Management {
  apiKey: string;
  accountId: string;
  call(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  createModel(modelId: string, model?: Record<string, unknown>): Promise<Reply>;
  upload(
    modelId: string,
    fileName: string,
    content: Uint8Array | string,
    headers?: Record<string, string>,
  ): Promise<Reply>;
  /** PUTs every file of a folder. */
  uploadFolder(modelId: string, dir: string): Promise<void>;
  validate(modelId: string): Promise<Reply>;
  getModel(modelId: string): Promise<Reply>;
  deploy(modelId: string): Promise<Reply>;
  undeploy(modelId: string): Promise<Reply>;
  /** Polls the model until its deployment is in `state` (null: gone). */
  waitForDeployment(modelId: string, state: string | null, timeoutMs?: number): Promise<Reply>;
  /** create + upload + validate + deploy + wait: a served adapter. */
  deployFolder(modelId: string, dir: string): Promise<string>;
}

export interface Reply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export function management(hearth: TestHearth, accountId: string, apiKey: string): Management {
  const base = `${hearth.url}/v1/accounts/${accountId}/models`;
  const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const raw = body instanceof Uint8Array || typeof body === "string";
    const response = await fetch(route.startsWith("http") ? route : `${hearth.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body !== undefined && !raw ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : raw ? (body as Uint8Array | string) : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  const self: Management = {
    apiKey,
    accountId,
    call,
    createModel: (modelId, model = {}) => call("POST", base, { modelId, model }),
    upload: (modelId, fileName, content, headers) =>
      call(
        "PUT",
        `${base}/${modelId}/files/${fileName}`,
        typeof content === "string" ? Buffer.from(content) : content,
        headers,
      ),
    async uploadFolder(modelId, dir) {
      for (const name of (await readdir(dir)).sort()) {
        const reply = await self.upload(modelId, name, await readFile(path.join(dir, name)));
        expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      }
    },
    validate: (modelId) => call("POST", `${base}/${modelId}/validate`),
    getModel: (modelId) => call("GET", `${base}/${modelId}`),
    deploy: (modelId) => call("POST", `${base}/${modelId}/deploy`),
    undeploy: (modelId) => call("POST", `${base}/${modelId}/undeploy`),
    async waitForDeployment(modelId, state, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const reply = await self.getModel(modelId);
        const current = reply.body?.deployment?.state ?? null;
        if (current === state) return reply;
        if (Date.now() > deadline)
          throw new Error(`deployment of ${modelId} is ${current}, not ${state}: ${JSON.stringify(reply.body)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async deployFolder(modelId, dir) {
      expect((await self.createModel(modelId)).status).toBe(201);
      await self.uploadFolder(modelId, dir);
      const validated = await self.validate(modelId);
      expect(validated.status, JSON.stringify(validated.body)).toBe(200);
      expect((await self.deploy(modelId)).status).toBe(200);
      await self.waitForDeployment(modelId, "DEPLOYED");
      return `accounts/${accountId}/models/${modelId}`;
    },
  };
  return self;
}

/** A new account with a key (inference and models unless told), in the test Hearth's database. */
export async function createTestAccount(
  hearth: TestHearth,
  accountId: string,
  options: { enterprise?: boolean; maxDeployedModels?: number; scopes?: ApiKeyScope[] } = {},
): Promise<Management> {
  const db = hearth.api.database.db;
  const { scopes = ["inference", "models"], ...account } = options;
  await createAccount(db, { id: accountId, displayName: accountId, ...account });
  const { key } = await issueApiKey(db, { accountId, name: "test", scopes });
  return management(hearth, accountId, key);
}

/** The admin key's own account ("default"). */
export const defaultAccount = (hearth: TestHearth) => management(hearth, "default", hearth.apiKey);
