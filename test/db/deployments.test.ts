import { describe, expect, it } from "vitest";
import { createAccount } from "../../src/db/queries/accounts.js";
import {
  countDeployments,
  deleteDeployment,
  getDeployment,
  listDeployments,
  setDeploymentState,
  transitionDeployment,
} from "../../src/db/queries/deployments.js";
import { createModel, deleteModel } from "../../src/db/queries/models.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

describe.each(testDatabaseBackends)("deployment queries on %s", (kind) => {
  const t = useTestDatabase(kind, async (db) => {
    for (const accountId of ["alice", "bob"]) {
      await createAccount(db, { id: accountId, displayName: accountId });
      for (const modelId of ["m1", "m2"]) {
        await createModel(db, {
          accountId,
          modelId,
          kind: "lora",
          baseModel: "accounts/hearth/models/hearth-tiny",
          state: "READY",
        });
      }
    }
  });

  it("sets, updates and reads a deployment's state", async () => {
    expect(await getDeployment(t.db, "alice", "m1")).toBeNull();
    const deploying = await setDeploymentState(t.db, "alice", "m1", "DEPLOYING");
    expect(deploying).toMatchObject({ state: "DEPLOYING", reason: null, artifactPath: null });
    const deployed = await setDeploymentState(t.db, "alice", "m1", "DEPLOYED", { artifactPath: "/adapters/abc.gguf" });
    expect(deployed).toMatchObject({ state: "DEPLOYED", artifactPath: "/adapters/abc.gguf" });
    expect(deployed.createdAt).toEqual(deploying.createdAt);
    const failed = await setDeploymentState(t.db, "alice", "m1", "FAILED", { reason: "out of memory" });
    expect(failed).toMatchObject({ state: "FAILED", reason: "out of memory", artifactPath: "/adapters/abc.gguf" });
    expect(await getDeployment(t.db, "alice", "m1")).toEqual(failed);
  });

  it("needs an existing model", async () => {
    await expect(setDeploymentState(t.db, "alice", "missing", "DEPLOYING")).rejects.toThrow();
  });

  it("moves a deployment only from the expected states", async () => {
    await setDeploymentState(t.db, "alice", "m1", "DEPLOYED");
    expect(await transitionDeployment(t.db, "alice", "m1", ["DEPLOYING"], "FAILED")).toBeNull();
    expect(await transitionDeployment(t.db, "alice", "m1", ["DEPLOYED", "FAILED"], "UNDEPLOYING")).toMatchObject({
      state: "UNDEPLOYING",
    });
    expect(await transitionDeployment(t.db, "alice", "m2", ["DEPLOYED"], "UNDEPLOYING")).toBeNull();
    expect(await transitionDeployment(t.db, "alice", "m1", [], "DEPLOYED")).toBeNull();
  });

  it("lists, counts and deletes per account", async () => {
    await setDeploymentState(t.db, "alice", "m1", "DEPLOYED");
    await setDeploymentState(t.db, "alice", "m2", "FAILED");
    await setDeploymentState(t.db, "bob", "m1", "DEPLOYING");
    expect((await listDeployments(t.db, { accountId: "alice" })).map((d) => d.modelId)).toEqual(["m1", "m2"]);
    expect((await listDeployments(t.db, { states: ["DEPLOYING"] })).map((d) => d.accountId)).toEqual(["bob"]);
    expect(await listDeployments(t.db)).toHaveLength(3);
    expect(await listDeployments(t.db, { states: [] })).toEqual([]);
    expect(await countDeployments(t.db, "alice")).toBe(2);
    expect(await countDeployments(t.db, "alice", ["DEPLOYING", "DEPLOYED", "UNDEPLOYING"])).toBe(1);
    expect(await countDeployments(t.db, "bob", [])).toBe(0);
    expect(await deleteDeployment(t.db, "alice", "m2")).toBe(true);
    expect(await deleteDeployment(t.db, "alice", "m2")).toBe(false);
    expect(await countDeployments(t.db, "alice")).toBe(1);
  });

  it("goes with its model", async () => {
    await setDeploymentState(t.db, "bob", "m2", "DEPLOYED");
    await deleteModel(t.db, "bob", "m2");
    expect(await getDeployment(t.db, "bob", "m2")).toBeNull();
  });
});
