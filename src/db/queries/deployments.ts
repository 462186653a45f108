import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { deployments, type Deployment, type DeploymentState } from "../schema/deployments.js";

export interface DeploymentFields {
  reason?: string | null;
  artifactPath?: string | null;
}

export interface ListDeploymentsFilter {
  accountId?: string;
  states?: readonly DeploymentState[];
}

export async function getDeployment(db: Db, accountId: string, modelId: string): Promise<Deployment | null> {
  const rows = await db
    .select()
    .from(deployments)
    .where(and(eq(deployments.accountId, accountId), eq(deployments.modelId, modelId)))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * Creates or updates the deployment of a model. `reason` is cleared unless given;
 * `artifactPath` is kept unless given. The model must exist (foreign key).
 */
export async function setDeploymentState(
  db: Db,
  accountId: string,
  modelId: string,
  state: DeploymentState,
  fields: DeploymentFields = {},
): Promise<Deployment> {
  const set = {
    state,
    reason: fields.reason ?? null,
    ...(fields.artifactPath === undefined ? {} : { artifactPath: fields.artifactPath }),
  };
  const rows = await db
    .insert(deployments)
    .values({ accountId, modelId, ...set })
    .onConflictDoUpdate({
      target: [deployments.accountId, deployments.modelId],
      set: { ...set, updatedAt: sql`now()` },
    })
    .returning();
  return rows[0]!;
}

/**
 * Moves an existing deployment to `to` only if it is in one of `from` (compare and
 * set, for transitions racing each other). Null when absent or in another state.
 */
export async function transitionDeployment(
  db: Db,
  accountId: string,
  modelId: string,
  from: readonly DeploymentState[],
  to: DeploymentState,
  fields: DeploymentFields = {},
): Promise<Deployment | null> {
  if (from.length === 0) return null;
  const rows = await db
    .update(deployments)
    .set({
      state: to,
      reason: fields.reason ?? null,
      ...(fields.artifactPath === undefined ? {} : { artifactPath: fields.artifactPath }),
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(deployments.accountId, accountId),
        eq(deployments.modelId, modelId),
        inArray(deployments.state, [...from]),
      ),
    )
    .returning();
  return rows[0] ?? null;
}

export async function listDeployments(db: Db, filter: ListDeploymentsFilter = {}): Promise<Deployment[]> {
  if (filter.states?.length === 0) return [];
  return db
    .select()
    .from(deployments)
    .where(
      and(
        filter.accountId === undefined ? undefined : eq(deployments.accountId, filter.accountId),
        filter.states === undefined ? undefined : inArray(deployments.state, [...filter.states]),
      ),
    )
    .orderBy(asc(deployments.accountId), asc(deployments.modelId));
}

/** Deployments of an account, optionally only those in some states (for quotas). */
export async function countDeployments(
  db: Db,
  accountId: string,
  states?: readonly DeploymentState[],
): Promise<number> {
  if (states?.length === 0) return 0;
  const rows = await db
    .select({ n: count() })
    .from(deployments)
    .where(
      and(
        eq(deployments.accountId, accountId),
        states === undefined ? undefined : inArray(deployments.state, [...states]),
      ),
    );
  return rows[0]?.n ?? 0;
}

export async function deleteDeployment(db: Db, accountId: string, modelId: string): Promise<boolean> {
  const rows = await db
    .delete(deployments)
    .where(and(eq(deployments.accountId, accountId), eq(deployments.modelId, modelId)))
    .returning({ modelId: deployments.modelId });
  return rows.length > 0;
}
