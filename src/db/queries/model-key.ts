import { and, eq, type SQL } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";

/**
 * The row of one model, by its owner and ID, in a table keyed like `models` (models,
 * deployments); the key may also be another table's columns, for a join.
 */
export function modelKey(
  table: { accountId: PgColumn; modelId: PgColumn },
  accountId: string | PgColumn,
  modelId: string | PgColumn,
): SQL {
  return and(eq(table.accountId, accountId), eq(table.modelId, modelId))!;
}
