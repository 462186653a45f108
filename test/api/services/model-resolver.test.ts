import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ModelResolver } from "../../../src/api/services/model-resolver.js";
import { createAccount } from "../../../src/db/queries/accounts.js";
import { deleteDeployment, setDeploymentState } from "../../../src/db/queries/deployments.js";
import { createModel, updateModel, upsertBaseModel } from "../../../src/db/queries/models.js";
import { HEARTH_TINY_REF } from "../../../src/models/factory/demo-models.js";
import { openTestDatabase, truncateAllTables, type TestDatabase } from "../../helpers/test-databases.js";
import { testModelDir } from "../../helpers/test-models.js";

const LORA = "accounts/acme/models/lora";

// The resolver's cache on its own, against a database changed behind its back.
describe("ModelResolver cache", () => {
  let t: TestDatabase;
  let now: number;
  const clock = () => now;
  const resolver = (ttlMs: number) => new ModelResolver(t.db, { ttlMs, now: clock });
  const status = (p: Promise<unknown>) =>
    p.then(
      () => "resolved",
      (e: { code?: string }) => e.code ?? "error",
    );

  beforeAll(async () => {
    t = await openTestDatabase("pglite");
  });
  afterAll(() => t.cleanup());
  beforeEach(async () => {
    now = 1_000_000;
    await truncateAllTables(t.db);
    await createAccount(t.db, { id: "hearth", displayName: "Hearth" });
    await createAccount(t.db, { id: "acme", displayName: "Acme" });
    await createAccount(t.db, { id: "other", displayName: "Other" });
    await upsertBaseModel(t.db, {
      modelId: "hearth-tiny",
      filePath: path.join(testModelDir, "hearth-tiny.gguf"),
      contextLength: 2048,
      embeddingLength: 320,
      displayName: "hearth-tiny",
    });
    await createModel(t.db, {
      accountId: "acme",
      modelId: "lora",
      kind: "lora",
      state: "READY",
      baseModel: HEARTH_TINY_REF,
    });
    await setDeploymentState(t.db, "acme", "lora", "DEPLOYED", { artifactPath: "artifacts/lora/a.gguf" });
  });

  it("reuses a resolution until the TTL has passed", async () => {
    const models = resolver(5_000);
    const first = await models.forInference("acme", LORA);
    expect(first.target).toEqual({ name: LORA, baseModelId: "hearth-tiny", adapter: { key: "artifacts/lora/a.gguf" } });
    await setDeploymentState(t.db, "acme", "lora", "UNDEPLOYING");
    now += 4_999;
    expect(await models.forInference("acme", LORA)).toEqual(first); // from memory: the database says otherwise
    now += 1;
    expect(await status(models.forInference("acme", LORA))).toBe("not_found");
  });

  it("asks the database every time with a TTL of 0", async () => {
    const models = resolver(0);
    await models.forInference("acme", LORA);
    await deleteDeployment(t.db, "acme", "lora");
    expect(await status(models.forInference("acme", LORA))).toBe("not_found");
  });

  it("forgets everything on invalidate", async () => {
    const models = resolver(600_000);
    await models.forInference("acme", LORA);
    await models.forInference("acme", HEARTH_TINY_REF);
    await updateModel(t.db, "acme", "lora", { conversationConfig: { template: "{{ messages }}" } });
    expect((await models.forInference("acme", LORA)).target.chatTemplate).toBeUndefined();
    models.invalidate();
    expect((await models.forInference("acme", LORA)).target.chatTemplate).toBe("{{ messages }}");
  });

  it("does not remember that a model was missing or not deployed", async () => {
    const models = resolver(600_000);
    await setDeploymentState(t.db, "acme", "lora", "DEPLOYING");
    expect(await status(models.forInference("acme", LORA))).toBe("not_found");
    await setDeploymentState(t.db, "acme", "lora", "DEPLOYED", { artifactPath: "artifacts/lora/a.gguf" });
    expect(await status(models.forInference("acme", LORA))).toBe("resolved");
    expect(await status(models.forInference("acme", "accounts/acme/models/later"))).toBe("not_found");
    await createModel(t.db, {
      accountId: "acme",
      modelId: "later",
      kind: "lora",
      state: "READY",
      baseModel: HEARTH_TINY_REF,
    });
    await setDeploymentState(t.db, "acme", "later", "DEPLOYED", { artifactPath: "artifacts/lora/b.gguf" });
    expect(await status(models.forInference("acme", "accounts/acme/models/later"))).toBe("resolved");
  });

  it("keeps resolutions per caller: one account's does not serve another", async () => {
    const models = resolver(600_000);
    expect(await status(models.forInference("acme", LORA))).toBe("resolved");
    expect(await status(models.forInference("other", LORA))).toBe("not_found");
  });
});
