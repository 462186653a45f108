import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { installationId } from "../../src/db/queries/installation.js";
import { testDatabaseBackends, useTestDatabase } from "../helpers/test-databases.js";

describe.each(testDatabaseBackends)("the installation id on %s", (kind) => {
  const t = useTestDatabase(kind);

  it("is made once, also when asked for at once, and the same ever after", async () => {
    const ids = await Promise.all([1, 2, 3, 4].map(() => installationId(t.db)));
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(await installationId(t.db)).toBe(ids[0]);
  });

  it("keeps the table at one row", async () => {
    await expect(t.db.execute(sql`insert into installation (single, id) values (false, 'another')`)).rejects.toThrow();
  });
});
