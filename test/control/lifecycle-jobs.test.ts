import crypto from "node:crypto";
import { cp, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAccount } from "../../src/db/queries/accounts.js";
import { getDeployment, setDeploymentState } from "../../src/db/queries/deployments.js";
import { createModel, getModel, upsertBaseModel } from "../../src/db/queries/models.js";
import { createLogger } from "../../src/logger.js";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { adapterChannel, type AdapterEvent } from "../../src/jobs/adapter-events.js";
import { FileBlobStore } from "../../src/storage/file-blob-store.js";
import { storageKeys } from "../../src/storage/keys.js";
import { deployModel } from "../../src/control/deploy-model.js";
import type { ControlDeps } from "../../src/control/control-deps.js";
import { undeployModel } from "../../src/control/undeploy-model.js";
import { openTestDatabase, truncateAllTables, type TestDatabase } from "../helpers/test-databases.js";
import { testModelDir } from "../helpers/test-models.js";

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");

// The deploy and undeploy handlers on their own: idempotent, failing clearly, sharing artifacts.
describe("lifecycle job handlers", () => {
  let database: TestDatabase;
  let storageDir: string;
  let redis: Redis;
  let listener: Redis;
  let deps: ControlDeps;
  const events: AdapterEvent[] = [];
  /** The models the handlers said changed (what makes API processes drop cached resolutions). */
  const changed: string[] = [];
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    database = await openTestDatabase("pglite");
    storageDir = await mkdtemp(path.join(os.tmpdir(), "hearth-lifecycle-jobs-"));
    redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    listener = redis.duplicate();
    await listener.subscribe(adapterChannel(prefix));
    listener.on("message", (_channel, message: string) => events.push(JSON.parse(message) as AdapterEvent));
    deps = {
      db: database.db,
      storage: new FileBlobStore(storageDir),
      redis,
      redisPrefix: prefix,
      prefixOwner: { id: crypto.randomUUID(), database: database.database.where },
      modelChanges: {
        changed: async (model) => {
          changed.push(model);
        },
      },
      maxLoraRank: 64,
      log: createLogger("error", "test"),
    };
  });
  afterAll(async () => {
    listener?.disconnect();
    redis?.disconnect();
    await database?.cleanup();
    if (storageDir) await rm(storageDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await truncateAllTables(database.db);
    await rm(storageDir, { recursive: true, force: true });
    events.length = 0;
    changed.length = 0;
    await createAccount(database.db, { id: "hearth", displayName: "Hearth" });
    await createAccount(database.db, { id: "acme", displayName: "Acme" });
    await upsertBaseModel(database.db, {
      modelId: "hearth-tiny",
      filePath: path.join(testModelDir, "hearth-tiny.gguf"),
      contextLength: 2048,
      embeddingLength: 320,
      displayName: "hearth-tiny",
    });
  });

  async function readyAdapter(modelId: string, dir = PEFT_EXAMPLE) {
    await createModel(database.db, {
      accountId: "acme",
      modelId,
      kind: "lora",
      state: "READY",
      baseModel: HEARTH_TINY_REF,
    });
    const store = new FileBlobStore(storageDir);
    for (const name of await readdir(dir)) {
      await cp(path.join(dir, name), store.localPath(storageKeys.modelFile("acme", modelId, name)), {
        recursive: true,
      });
    }
  }
  const waitForEvents = async (n: number) => {
    for (let i = 0; i < 100 && events.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  };

  it("deploys once, however often the job runs, and announces it", async () => {
    await readyAdapter("a");
    await setDeploymentState(database.db, "acme", "a", "DEPLOYING");
    expect(await deployModel(deps, { accountId: "acme", modelId: "a" })).toBe("done");
    expect(await deployModel(deps, { accountId: "acme", modelId: "a" })).toBe("skipped");
    const deployment = await getDeployment(database.db, "acme", "a");
    expect(deployment).toMatchObject({ state: "DEPLOYED", reason: null });
    expect(deployment!.artifactPath).toMatch(/^artifacts\/lora\/[0-9a-f]{64}\.gguf$/);
    expect((await getModel(database.db, "acme", "a"))!.artifactKey).toBe(deployment!.artifactPath);
    await waitForEvents(1);
    expect(events).toEqual([
      {
        type: "deployed",
        model: "accounts/acme/models/a",
        baseModelId: "hearth-tiny",
        adapterKey: deployment!.artifactPath,
      },
    ]);
    expect(changed).toEqual(["accounts/acme/models/a"]);
  });

  it("shares one artifact between identical adapters, and undeploys each without freeing the other's", async () => {
    await readyAdapter("a");
    await readyAdapter("b");
    for (const id of ["a", "b"]) {
      await setDeploymentState(database.db, "acme", id, "DEPLOYING");
      await deployModel(deps, { accountId: "acme", modelId: id });
    }
    const [a, b] = [await getDeployment(database.db, "acme", "a"), await getDeployment(database.db, "acme", "b")];
    expect(a!.artifactPath).toBe(b!.artifactPath);
    expect(await readdir(path.join(storageDir, "artifacts", "lora"))).toHaveLength(1);

    await setDeploymentState(database.db, "acme", "a", "UNDEPLOYING", { artifactPath: a!.artifactPath });
    changed.length = 0;
    expect(await undeployModel(deps, { accountId: "acme", modelId: "a" })).toBe("done");
    expect(await undeployModel(deps, { accountId: "acme", modelId: "a" })).toBe("skipped");
    expect(changed).toEqual(["accounts/acme/models/a"]);
    expect(await getDeployment(database.db, "acme", "a")).toBeNull();
    await waitForEvents(3);
    expect(events.at(-1)).toMatchObject({ type: "undeployed", model: "accounts/acme/models/a", stillDeployed: true });

    await setDeploymentState(database.db, "acme", "b", "UNDEPLOYING", { artifactPath: b!.artifactPath });
    await undeployModel(deps, { accountId: "acme", modelId: "b" });
    await waitForEvents(4);
    expect(events.at(-1)).toMatchObject({ type: "undeployed", model: "accounts/acme/models/b", stillDeployed: false });
  });

  it("does nothing for a deploy overtaken by an undeploy", async () => {
    await readyAdapter("a");
    await setDeploymentState(database.db, "acme", "a", "UNDEPLOYING");
    expect(await deployModel(deps, { accountId: "acme", modelId: "a" })).toBe("skipped");
    expect((await getDeployment(database.db, "acme", "a"))!.state).toBe("UNDEPLOYING");
  });

  it("fails the deployment, with the reason, when the stored files no longer pass validation", async () => {
    await readyAdapter("a");
    await writeFile(
      new FileBlobStore(storageDir).localPath(storageKeys.modelFile("acme", "a", "adapter_config.json")),
      "{",
    );
    await setDeploymentState(database.db, "acme", "a", "DEPLOYING");
    expect(await deployModel(deps, { accountId: "acme", modelId: "a" })).toBe("failed");
    const deployment = await getDeployment(database.db, "acme", "a");
    expect(deployment!.state).toBe("FAILED");
    expect(deployment!.reason).toMatch(/adapter_config\.json/);
    expect(events).toEqual([]);
    expect(changed).toEqual([]);
  });

  it("reconverts when the artifact went missing from storage", async () => {
    await readyAdapter("a");
    await setDeploymentState(database.db, "acme", "a", "DEPLOYING");
    await deployModel(deps, { accountId: "acme", modelId: "a" });
    const key = (await getDeployment(database.db, "acme", "a"))!.artifactPath!;
    await rm(path.join(storageDir, key));
    await setDeploymentState(database.db, "acme", "a", "DEPLOYING");
    expect(await deployModel(deps, { accountId: "acme", modelId: "a" })).toBe("done");
    expect((await getDeployment(database.db, "acme", "a"))!.artifactPath).toBe(key);
    expect(await new FileBlobStore(storageDir).stat(key)).toBeDefined();
  });
});
