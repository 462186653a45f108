import { asc } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createAccount } from "../../src/db/queries/accounts.js";
import { deleteDeployment, setDeploymentState, transitionDeployment } from "../../src/db/queries/deployments.js";
import { createModel, deleteModel } from "../../src/db/queries/models.js";
import { deployedHours } from "../../src/db/queries/usage.js";
import { deploymentEvents } from "../../src/db/schema/usage.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

const HOUR = 3_600_000;
const T0 = Date.parse("2026-11-01T00:00:00Z");
const at = (hours: number) => new Date(T0 + hours * HOUR);

// Deployment events, written by the trigger of migration 0009 on every path, and deployed hours.
describe.each(testDatabaseBackends)("deployment events on %s", (kind) => {
  const t = useTestDatabase(kind, async (db) => {
    await createAccount(db, { id: "alice", displayName: "alice" });
    for (const modelId of ["m1", "m2"]) {
      await createModel(db, {
        accountId: "alice",
        modelId,
        kind: "lora",
        baseModel: "accounts/hearth/models/hearth-tiny",
        state: "READY",
      });
    }
  });
  const events = async () =>
    (await t.db.select().from(deploymentEvents).orderBy(asc(deploymentEvents.id))).map(
      (e) => `${e.modelId} ${e.event}`,
    );

  it("records each move into DEPLOYED and out of it, whatever makes it, and nothing else", async () => {
    await setDeploymentState(t.db, "alice", "m1", "DEPLOYING");
    await transitionDeployment(t.db, "alice", "m1", ["DEPLOYING"], "DEPLOYED");
    // A deploy job that runs twice moves nothing the second time.
    await transitionDeployment(t.db, "alice", "m1", ["DEPLOYING"], "DEPLOYED");
    await setDeploymentState(t.db, "alice", "m1", "DEPLOYED");
    await transitionDeployment(t.db, "alice", "m1", ["DEPLOYED"], "UNDEPLOYING");
    await deleteDeployment(t.db, "alice", "m1");
    expect(await events()).toEqual(["m1 deployed", "m1 undeployed"]);
    // Deployed, then gone with its deployment row, or with its model.
    await setDeploymentState(t.db, "alice", "m1", "DEPLOYED");
    await deleteDeployment(t.db, "alice", "m1");
    await setDeploymentState(t.db, "alice", "m2", "DEPLOYED");
    await deleteModel(t.db, "alice", "m2");
    // A deploy that fails was never deployed.
    await setDeploymentState(t.db, "alice", "m1", "DEPLOYING");
    await transitionDeployment(t.db, "alice", "m1", ["DEPLOYING"], "FAILED");
    expect((await events()).slice(2)).toEqual(["m1 deployed", "m1 undeployed", "m2 deployed", "m2 undeployed"]);
  });

  it("sums deployed hours within a period, spans cut at its ends, one still deployed until now", async () => {
    await t.db.insert(deploymentEvents).values([
      { accountId: "alice", modelId: "m1", event: "deployed", at: at(0) },
      { accountId: "alice", modelId: "m1", event: "undeployed", at: at(10) },
      { accountId: "alice", modelId: "m1", event: "deployed", at: at(20) },
      { accountId: "alice", modelId: "m1", event: "undeployed", at: at(23) },
      { accountId: "alice", modelId: "m2", event: "deployed", at: at(22) },
      { accountId: "bob", modelId: "m1", event: "deployed", at: at(0) },
    ]);
    const hours = (start: number, end: number, now = 30) =>
      deployedHours(t.db, "alice", { start: at(start), end: at(end) }, at(now));
    expect(await hours(0, 24)).toEqual([
      { modelId: "m1", hours: 13 },
      { modelId: "m2", hours: 2 },
    ]);
    // Cut at both ends: 5–10 and 20–21.
    expect(await hours(5, 21)).toEqual([{ modelId: "m1", hours: 6 }]);
    // m2 is still deployed: counted until now, not the period's end.
    expect(await hours(24, 100)).toEqual([{ modelId: "m2", hours: 6 }]);
    expect(await hours(11, 19)).toEqual([]);
  });
});
