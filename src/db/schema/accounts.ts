import { sql } from "drizzle-orm";
import { boolean, check, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export { ACCOUNT_ID_PATTERN } from "../../domain/vocabulary.js";

export { BUILTIN_ACCOUNT_ID } from "../../domain/model-name.js";

/** The account created on first start, holding the first admin key. */
export const DEFAULT_ACCOUNT_ID = "default";

export const accounts = pgTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    displayName: text("display_name").notNull(),
    enterprise: boolean("enterprise").notNull().default(false),
    maxDeployedModels: integer("max_deployed_models").notNull().default(100),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("accounts_id_format", sql`${t.id} ~ '^[a-z0-9][a-z0-9-]{0,62}$'`),
    check("accounts_max_deployed_models_non_negative", sql`${t.maxDeployedModels} >= 0`),
  ],
);

export type Account = typeof accounts.$inferSelect;
export type NewAccount = typeof accounts.$inferInsert;
