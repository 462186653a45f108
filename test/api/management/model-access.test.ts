import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countDeployments, getDeployment, setDeploymentState } from "../../../src/db/queries/deployments.js";
import { createModel } from "../../../src/db/queries/models.js";
import { HEARTH_TINY_REF } from "../../../src/models/factory/demo-models.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount, type Management } from "../../helpers/management.js";
import { testModelDir } from "../../helpers/test-models.js";

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");

// Accounts are walled off from each other, and the deployed-model limit holds.
describe("model access and limits", () => {
  let hearth: TestHearth;
  let alice: Management;
  let bob: Management;

  beforeAll(async () => {
    hearth = await startTestHearth();
    alice = await createTestAccount(hearth, "alice");
    bob = await createTestAccount(hearth, "bob");
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("hides one account's models from another exactly as if they did not exist", async () => {
    const name = await alice.deployFolder("secret", PEFT_EXAMPLE);
    const aliceModels = "/v1/accounts/alice/models";
    const missing = async (status: Promise<{ status: number; body: { error: { message: string } } }>) => {
      const reply = await status;
      expect(reply.status).toBe(404);
      return reply.body.error.message;
    };
    // Bob sees the same message for Alice's model as for one that does not exist.
    const seen = await missing(bob.call("GET", `${aliceModels}/secret`));
    const absent = await missing(bob.call("GET", `${aliceModels}/no-such-model`));
    expect(seen.replace("secret", "X")).toBe(absent.replace("no-such-model", "X"));
    await missing(bob.call("GET", aliceModels));
    await missing(bob.call("POST", `${aliceModels}/secret/deploy`));
    await missing(bob.call("POST", `${aliceModels}/secret/undeploy`));
    await missing(bob.call("POST", `${aliceModels}/secret/validate`));
    await missing(bob.call("PATCH", `${aliceModels}/secret`, { displayName: "mine now" }));
    await missing(bob.call("PUT", `${aliceModels}/secret/files/hearth.json`, "{}"));
    await missing(bob.call("DELETE", `${aliceModels}/secret?force=true`));
    await missing(bob.call("POST", aliceModels, { modelId: "planted" }));

    const bobClient = new OpenAI({ baseURL: hearth.baseURL, apiKey: bob.apiKey, maxRetries: 0 });
    const query = await bobClient.completions
      .create({ model: name, prompt: "x", max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(query).toMatchObject({ status: 404 });
    expect((query as Error).message).toMatch(/does not exist or you do not have access/);
    expect((await bobClient.models.list()).data.map((m) => m.id)).not.toContain(name);

    // Nothing Bob did changed Alice's model.
    const still = await alice.getModel("secret");
    expect(still.body).toMatchObject({ displayName: "secret", deployment: { state: "DEPLOYED" } });
    expect(
      (await alice.call("GET", "/v1/accounts")).body.accounts.map((a: { accountId: string }) => a.accountId),
    ).toEqual(["alice"]);
    expect((await bob.call("GET", "/v1/whoami")).body).toMatchObject({
      accountId: "bob",
      scopes: ["inference", "models"],
    });
  });

  it("lets everyone read the operator's base models but not change them", async () => {
    const base = await bob.call("GET", "/v1/accounts/hearth/models/hearth-tiny");
    expect(base.status).toBe(200);
    expect(base.body).toMatchObject({ name: HEARTH_TINY_REF, kind: "base", state: "READY" });
    expect((await bob.call("PATCH", "/v1/accounts/hearth/models/hearth-tiny", { description: "x" })).status).toBe(404);
    expect((await bob.call("DELETE", "/v1/accounts/hearth/models/hearth-tiny")).status).toBe(404);
    const listed = await bob.call("GET", "/v1/accounts/hearth/models");
    expect(listed.body.models.map((m: { name: string }) => m.name)).toContain(HEARTH_TINY_REF);
  });

  it("refuses the 101st deployed model of an account, changing nothing", async () => {
    const carol = await createTestAccount(hearth, "carol");
    const db = hearth.api.database.db;
    for (let i = 0; i < 100; i++) {
      const modelId = `held-${i}`;
      await createModel(db, { accountId: "carol", modelId, kind: "lora", state: "READY", baseModel: HEARTH_TINY_REF });
      await setDeploymentState(db, "carol", modelId, "DEPLOYED");
    }
    await carol.createModel("one-too-many");
    await carol.uploadFolder("one-too-many", PEFT_EXAMPLE);
    expect((await carol.validate("one-too-many")).body.state).toBe("READY");

    const refused = await carol.deploy("one-too-many");
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "quota_exceeded", type: "insufficient_quota" });
    expect(refused.body.error.message).toMatch(/100 deployed models/);
    expect(await getDeployment(db, "carol", "one-too-many")).toBeNull();
    expect(await countDeployments(db, "carol")).toBe(100);

    // Freeing a slot makes room.
    expect((await carol.undeploy("held-0")).status).toBe(200);
    await carol.waitForDeployment("held-0", null);
    expect((await carol.deploy("one-too-many")).status).toBe(200);
    await carol.waitForDeployment("one-too-many", "DEPLOYED");
  });

  it("applies each account's own limit, and none to an enterprise account", async () => {
    const small = await createTestAccount(hearth, "small", { maxDeployedModels: 1 });
    await small.deployFolder("first", PEFT_EXAMPLE);
    await small.createModel("second");
    await small.uploadFolder("second", PEFT_EXAMPLE);
    await small.validate("second");
    expect((await small.deploy("second")).status).toBe(429);

    const big = await createTestAccount(hearth, "big", { enterprise: true, maxDeployedModels: 0 });
    await big.deployFolder("first", PEFT_EXAMPLE);
    await big.deployFolder("second", PEFT_EXAMPLE);
  });

  it("takes concurrent deploys without overshooting the limit", async () => {
    const racer = await createTestAccount(hearth, "racer", { maxDeployedModels: 2 });
    for (const id of ["r1", "r2", "r3", "r4"]) {
      await racer.createModel(id);
      await racer.uploadFolder(id, PEFT_EXAMPLE);
      await racer.validate(id);
    }
    const replies = await Promise.all(["r1", "r2", "r3", "r4"].map((id) => racer.deploy(id)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 429, 429]);
  });
});
