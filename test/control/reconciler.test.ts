import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDeployment, transitionDeployment } from "../../src/db/queries/deployments.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { defaultAccount, type Management } from "../helpers/management.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/redis.js";
import { testModelDir } from "../helpers/test-models.js";

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");

/**
 * Redis loses the deploy and undeploy jobs (FLUSHALL, as a restart without persistence
 * would): the database still says DEPLOYING or UNDEPLOYING, and the reconciler finishes the
 * transition. A Redis of the test's own, since FLUSHALL takes everything.
 */
describe("deployments whose job Redis lost", () => {
  let redis: PrivateRedis;
  let client: Redis;
  let hearth: TestHearth;
  let me: Management;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    client = new Redis(redis.url);
    hearth = await startTestHearth({
      worker: false,
      env: { REDIS_URL: redis.url, HEARTH_RECONCILE_INTERVAL_MS: "200", HEARTH_RECONCILE_AFTER_MS: "500" },
    });
    me = defaultAccount(hearth);
  });
  afterAll(async () => {
    client?.disconnect();
    await hearth?.close();
    await redis?.kill();
  });

  const ready = async (modelId: string) => {
    expect((await me.createModel(modelId)).status).toBe(201);
    await me.uploadFolder(modelId, PEFT_EXAMPLE);
    expect((await me.validate(modelId)).body.state).toBe("READY");
  };
  const db = () => hearth.api.database.db;

  it("reaches DEPLOYED when FLUSHALL comes right after the deploy", async () => {
    await ready("flushed-deploy");
    expect((await me.deploy("flushed-deploy")).status).toBe(200);
    await client.flushall();
    await me.waitForDeployment("flushed-deploy", "DEPLOYED", 15_000);
  });

  it("re-queues a deploy whose job is gone", async () => {
    await ready("lost-deploy");
    // What the database holds after Redis lost a queued deploy: DEPLOYING, and no job anywhere.
    expect((await startDeployment(db(), "default", "lost-deploy")).outcome).toBe("started");
    await client.flushall();
    await me.waitForDeployment("lost-deploy", "DEPLOYED", 15_000);
  });

  it("finishes an undeploy whose job is gone", async () => {
    await ready("lost-undeploy");
    expect((await me.deploy("lost-undeploy")).status).toBe(200);
    await me.waitForDeployment("lost-undeploy", "DEPLOYED", 15_000);
    await transitionDeployment(db(), "default", "lost-undeploy", ["DEPLOYED"], "UNDEPLOYING");
    await client.flushall();
    await me.waitForDeployment("lost-undeploy", null, 15_000);
  });
});
