import { defineConfig } from "drizzle-kit";

// Migrations are generated from the schema (`npm run db:generate`), committed in
// drizzle/, and applied at start-up by `migrateDatabase` (src/db/migrate.ts).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema/index.ts",
  out: "./drizzle",
  strict: true,
  verbose: true,
});
