import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import {
  claimBatch,
  getBatch,
  insertBatch,
  insertBatchResults,
  releaseBatch,
  renewBatch,
  resultLines,
  resultsPage,
} from "../../src/db/queries/batches.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

/**
 * The batch runner's queries (docs/reliability.md, "Batches"): a runner's lease, which no other
 * runner can take until it lapses; and each line's one result, counted once.
 */
describe.each(testDatabaseBackends)("batch queries on %s", (kind) => {
  const t = useTestDatabase(kind);
  const open = (id: string) =>
    insertBatch(t.db, {
      id,
      accountId: "acme",
      keyId: "key",
      endpoint: "/v1/chat/completions",
      inputFileId: "file-1",
      completionWindow: "24h",
      status: "in_progress",
      expiresAt: new Date(Date.now() + 86_400_000),
    });

  it("writes each line's result once and counts it once", async () => {
    await open("batch_1");
    const result = (line: number, statusCode: number | null, requestId = `r${line}`) => ({
      line,
      customId: `c${line}`,
      statusCode,
      requestId,
      body: { line, requestId },
    });
    expect(await insertBatchResults(t.db, "batch_1", [result(1, 200), result(2, 400), result(3, null)])).toBe(3);
    // Lines run again (their runner died before it knew): the first results stay, counted once.
    expect(await insertBatchResults(t.db, "batch_1", [result(1, 200, "again"), result(4, 200)])).toBe(1);
    expect(await insertBatchResults(t.db, "batch_1", [])).toBe(0);
    expect(await getBatch(t.db, "acme", "batch_1")).toMatchObject({ completed: 2, failed: 2 });
    expect([...(await resultLines(t.db, "batch_1"))].sort()).toEqual([1, 2, 3, 4]);
    const [first] = await resultsPage(t.db, "batch_1", 0, 1);
    expect(first).toMatchObject({ line: 1, requestId: "r1", body: { line: 1, requestId: "r1" } });
  });

  it("leases a batch to one runner at a time; another takes it once the lease lapses", async () => {
    await open("batch_2");
    expect((await claimBatch(t.db, "runner-a", 200))?.id).toBe("batch_2");
    expect(await claimBatch(t.db, "runner-b", 60_000)).toBeUndefined();
    // Renewed, it stays runner-a's past its first lease.
    expect(await renewBatch(t.db, "batch_2", "runner-a", 60_000)).toMatchObject({ runner: "runner-a" });
    await sleep(300);
    expect(await claimBatch(t.db, "runner-b", 60_000)).toBeUndefined();
    // runner-a dies (its last renewal a short one, so as not to wait): runner-b takes the batch
    // once the lease lapses, and runner-a can no longer renew it.
    await renewBatch(t.db, "batch_2", "runner-a", 1);
    await sleep(50);
    expect((await claimBatch(t.db, "runner-b", 60_000))?.id).toBe("batch_2");
    expect(await renewBatch(t.db, "batch_2", "runner-a", 60_000)).toBeUndefined();
    // Given back, any runner may take it at once.
    await releaseBatch(t.db, "batch_2", "runner-b");
    expect((await claimBatch(t.db, "runner-a", 60_000))?.id).toBe("batch_2");
  });
});
