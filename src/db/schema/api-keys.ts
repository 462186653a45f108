import { sql } from "drizzle-orm";
import { check, index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.js";

import type { ApiKeyRole } from "../../domain/vocabulary.js";

export { API_KEY_ROLES } from "../../domain/vocabulary.js";
export type { ApiKeyRole };

/**
 * API keys. Only the SHA-256 of a key is stored; `prefix` (its first characters)
 * is what listings show and what authentication looks the key up by.
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    role: text("role").$type<ApiKeyRole>().notNull(),
    prefix: text("prefix").notNull().unique(),
    hash: text("hash").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    check("api_keys_role", sql`${t.role} in ('admin', 'member')`),
    check("api_keys_hash_format", sql`${t.hash} ~ '^[0-9a-f]{64}$'`),
    index("api_keys_account_id_idx").on(t.accountId),
  ],
);

export type ApiKey = typeof apiKeys.$inferSelect;
export type NewApiKey = typeof apiKeys.$inferInsert;
