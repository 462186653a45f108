import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createAccount } from "../../src/db/queries/accounts.js";
import {
  createModel,
  deleteModel,
  getModel,
  getVisibleModel,
  listModels,
  listVisibleModels,
  setModelState,
  updateModel,
  upsertBaseModel,
} from "../../src/db/queries/models.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

const tiny = {
  accountId: "hearth",
  modelId: "hearth-tiny",
  filePath: "/models/hearth-tiny.gguf",
  contextLength: 512,
  embeddingLength: 64,
  displayName: "Hearth Tiny",
};

describe.each(testDatabaseBackends)("model queries on %s", (kind) => {
  const t = useTestDatabase(kind, async (db) => {
    for (const id of ["hearth", "alice", "bob"]) await createAccount(db, { id, displayName: id });
  });

  it("upserts a base model as READY and public, and refreshes it", async () => {
    const first = await upsertBaseModel(t.db, tiny);
    expect(first).toMatchObject({
      accountId: "hearth",
      modelId: "hearth-tiny",
      kind: "base",
      baseModel: null,
      state: "READY",
      public: true,
      filePath: "/models/hearth-tiny.gguf",
      contextLength: 512,
      embeddingLength: 64,
      displayName: "Hearth Tiny",
    });
    await setModelState(t.db, "hearth", "hearth-tiny", "FAILED", "file vanished");
    const second = await upsertBaseModel(t.db, { ...tiny, filePath: "/elsewhere.gguf", contextLength: 1024 });
    expect(second).toMatchObject({
      state: "READY",
      stateReason: null,
      filePath: "/elsewhere.gguf",
      contextLength: 1024,
    });
    expect(second.createdAt).toEqual(first.createdAt);
    expect(second.updatedAt.getTime()).toBeGreaterThanOrEqual(first.updatedAt.getTime());
    expect(await listModels(t.db, "hearth")).toHaveLength(1);
  });

  it("defaults the owner of a base model to the built-in account", async () => {
    const { accountId: _omit, ...rest } = tiny;
    expect((await upsertBaseModel(t.db, rest)).accountId).toBe("hearth");
  });

  it("keeps conversation_config as a JSON object on both drivers", async () => {
    await upsertBaseModel(t.db, { ...tiny, conversationConfig: { template: "chatml", stop: ["<|im_end|>"] } });
    expect((await getModel(t.db, "hearth", "hearth-tiny"))!.conversationConfig).toEqual({
      template: "chatml",
      stop: ["<|im_end|>"],
    });
    const rows = await t.db.execute<{ type: string }>(
      sql`select jsonb_typeof(conversation_config) as type from models`,
    );
    const list = Array.isArray(rows) ? rows : (rows as unknown as { rows: { type: string }[] }).rows;
    expect(list[0]!.type).toBe("object");
  });

  it("shows public base models and one's own models, and hides other accounts' private ones", async () => {
    await upsertBaseModel(t.db, tiny);
    await createModel(t.db, {
      accountId: "alice",
      modelId: "secret-lora",
      kind: "lora",
      baseModel: "accounts/hearth/models/hearth-tiny",
      state: "READY",
      displayName: "Alice's LoRA",
    });
    await createModel(t.db, { accountId: "bob", modelId: "bobs-base", kind: "base", state: "UPLOADING" });

    expect(await getVisibleModel(t.db, "alice", "alice", "secret-lora")).toMatchObject({ kind: "lora" });
    expect(await getVisibleModel(t.db, "bob", "alice", "secret-lora")).toBeNull();
    expect(await getVisibleModel(t.db, "bob", "alice", "no-such-model")).toBeNull();
    expect(await getVisibleModel(t.db, "bob", "hearth", "hearth-tiny")).toMatchObject({ public: true });
    expect(await getVisibleModel(t.db, "alice", "hearth", "hearth-tiny")).not.toBeNull();

    const names = async (caller: string, filter?: Parameters<typeof listVisibleModels>[2]) =>
      (await listVisibleModels(t.db, caller, filter)).map((m) => `${m.accountId}/${m.modelId}`);
    expect(await names("alice")).toEqual(["alice/secret-lora", "hearth/hearth-tiny"]);
    expect(await names("bob")).toEqual(["bob/bobs-base", "hearth/hearth-tiny"]);
    expect(await names("bob", { state: "READY" })).toEqual(["hearth/hearth-tiny"]);
    expect(await names("alice", { kind: "lora" })).toEqual(["alice/secret-lora"]);
    expect(await names("nobody")).toEqual(["hearth/hearth-tiny"]);
  });

  it("creates, updates and deletes a user's model", async () => {
    const created = await createModel(t.db, {
      accountId: "alice",
      modelId: "my-lora",
      kind: "lora",
      baseModel: "accounts/hearth/models/hearth-tiny",
      state: "UPLOADING",
      description: "first try",
    });
    expect(created).toMatchObject({ public: false, stateReason: null, displayName: "", description: "first try" });
    expect(
      await createModel(t.db, { accountId: "alice", modelId: "my-lora", kind: "base", state: "READY" }),
    ).toBeNull();

    const updated = await updateModel(t.db, "alice", "my-lora", { displayName: "Mine", filePath: "/blobs/abc" });
    expect(updated).toMatchObject({ displayName: "Mine", filePath: "/blobs/abc", state: "UPLOADING" });
    expect(await setModelState(t.db, "alice", "my-lora", "FAILED", "bad adapter")).toMatchObject({
      state: "FAILED",
      stateReason: "bad adapter",
    });
    expect(await setModelState(t.db, "alice", "my-lora", "READY")).toMatchObject({ state: "READY", stateReason: null });
    expect(await updateModel(t.db, "bob", "my-lora", { displayName: "stolen" })).toBeNull();

    expect(await deleteModel(t.db, "bob", "my-lora")).toBe(false);
    expect(await deleteModel(t.db, "alice", "my-lora")).toBe(true);
    expect(await getModel(t.db, "alice", "my-lora")).toBeNull();
    expect(await deleteModel(t.db, "alice", "my-lora")).toBe(false);
  });

  it("enforces the schema's constraints", async () => {
    // A LoRA needs a base model; a base model has none; states and kinds are closed sets.
    await expect(
      createModel(t.db, { accountId: "alice", modelId: "x", kind: "lora", state: "READY" }),
    ).rejects.toThrow();
    await expect(
      createModel(t.db, {
        accountId: "alice",
        modelId: "y",
        kind: "base",
        baseModel: "accounts/a/models/b",
        state: "READY",
      }),
    ).rejects.toThrow();
    await expect(
      createModel(t.db, { accountId: "alice", modelId: "z", kind: "base", state: "BOGUS" as "READY" }),
    ).rejects.toThrow();
    await expect(
      createModel(t.db, { accountId: "nobody", modelId: "z", kind: "base", state: "READY" }),
    ).rejects.toThrow();
  });
});
