import { sql } from "drizzle-orm";
import { bigint, boolean, check, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

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
    // Limits an admin set for this account (docs/security.md); null: the configured default.
    requestsPerMinute: integer("requests_per_minute"),
    tokensPerMinute: integer("tokens_per_minute"),
    maxInFlightRequests: integer("max_in_flight_requests"),
    maxModels: integer("max_models"),
    maxStoredBytes: bigint("max_stored_bytes", { mode: "number" }),
  },
  (t) => [
    check("accounts_id_format", sql`${t.id} ~ '^[a-z0-9][a-z0-9-]{0,62}$'`),
    check("accounts_max_deployed_models_non_negative", sql`${t.maxDeployedModels} >= 0`),
    check(
      "accounts_limits_positive",
      sql`coalesce(${t.requestsPerMinute}, 1) > 0 and coalesce(${t.tokensPerMinute}, 1) > 0 and coalesce(${t.maxInFlightRequests}, 1) > 0 and coalesce(${t.maxModels}, 1) > 0 and coalesce(${t.maxStoredBytes}, 1) > 0`,
    ),
  ],
);

export type Account = typeof accounts.$inferSelect;
export type NewAccount = typeof accounts.$inferInsert;
