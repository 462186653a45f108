import { sql } from "drizzle-orm";
import { boolean, check, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Which Hearth this database is: one row, made on the first start, whose id claims the Redis
 * prefix (redis/prefix-owner.ts). Every process on this database reads the same id, so API
 * replicas share the prefix, and a Hearth on another database is refused it.
 */
export const installation = pgTable(
  "installation",
  {
    /** Always true: the primary key that keeps the table at one row. */
    single: boolean("single").primaryKey().default(true),
    id: text("id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("installation_single", sql`${t.single}`)],
);
