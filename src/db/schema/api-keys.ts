import { sql } from "drizzle-orm";
import { check, index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.js";

import type { ApiKeyScope } from "../../domain/vocabulary.js";

export { API_KEY_SCOPES } from "../../domain/vocabulary.js";
export type { ApiKeyScope };

/**
 * API keys. Only the SHA-256 of a key is stored; `prefix` (its first characters)
 * is what listings show and what authentication looks the key up by. A key has one or more
 * scopes, may expire, and never belongs to the built-in account (whose models are the operator's).
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    scopes: text("scopes").array().$type<ApiKeyScope[]>().notNull(),
    prefix: text("prefix").notNull().unique(),
    hash: text("hash").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
  },
  (t) => [
    check(
      "api_keys_scopes",
      sql`cardinality(${t.scopes}) > 0 and ${t.scopes} <@ array['inference', 'models', 'admin']::text[]`,
    ),
    check("api_keys_not_builtin", sql`${t.accountId} <> 'hearth'`),
    check("api_keys_hash_format", sql`${t.hash} ~ '^[0-9a-f]{64}$'`),
    index("api_keys_account_id_idx").on(t.accountId),
  ],
);

export type ApiKey = typeof apiKeys.$inferSelect;
export type NewApiKey = typeof apiKeys.$inferInsert;
