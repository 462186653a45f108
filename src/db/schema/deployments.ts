import { sql } from "drizzle-orm";
import { check, foreignKey, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { models } from "./models.js";

import type { DeploymentState } from "../../domain/vocabulary.js";

export { DEPLOYMENT_STATES } from "../../domain/vocabulary.js";
export type { DeploymentState };

/** One row per deployed model; it goes when its model goes. */
export const deployments = pgTable(
  "deployments",
  {
    accountId: text("account_id").notNull(),
    modelId: text("model_id").notNull(),
    state: text("state").$type<DeploymentState>().notNull(),
    reason: text("reason"),
    artifactPath: text("artifact_path"),
    /** When the model last became DEPLOYED. */
    deployedAt: timestamp("deployed_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.modelId] }),
    foreignKey({
      name: "deployments_model_fk",
      columns: [t.accountId, t.modelId],
      foreignColumns: [models.accountId, models.modelId],
    }).onDelete("cascade"),
    check("deployments_state", sql`${t.state} in ('DEPLOYING', 'DEPLOYED', 'UNDEPLOYING', 'FAILED')`),
  ],
);

export type Deployment = typeof deployments.$inferSelect;
export type NewDeployment = typeof deployments.$inferInsert;
