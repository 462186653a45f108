import { and, asc, count, eq, inArray, not, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { accounts } from "../schema/accounts.js";
import { deployments, type Deployment, type DeploymentState } from "../schema/deployments.js";
import { modelKey } from "./model-key.js";

export interface DeploymentFields {
  reason?: string | null;
  artifactPath?: string | null;
  deployedAt?: Date | null;
}

/** States that hold a slot of the account's deployed-model limit. */
export const ACTIVE_DEPLOYMENT_STATES = [
  "DEPLOYING",
  "DEPLOYED",
  "UNDEPLOYING",
] as const satisfies readonly DeploymentState[];

export type StartDeploymentResult =
  | { outcome: "started"; deployment: Deployment }
  | { outcome: "already"; deployment: Deployment }
  | { outcome: "busy"; deployment: Deployment }
  | { outcome: "limit"; limit: number }
  | { outcome: "no-account" };

export interface ListDeploymentsFilter {
  accountId?: string;
  states?: readonly DeploymentState[];
}

export async function getDeployment(db: Db, accountId: string, modelId: string): Promise<Deployment | null> {
  return (await db.query.deployments.findFirst({ where: modelKey(deployments, accountId, modelId) })) ?? null;
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
    ...(fields.deployedAt === undefined ? {} : { deployedAt: fields.deployedAt }),
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
      ...(fields.deployedAt === undefined ? {} : { deployedAt: fields.deployedAt }),
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
    .where(modelKey(deployments, accountId, modelId))
    .returning({ modelId: deployments.modelId });
  return rows.length > 0;
}

/**
 * Puts a model into DEPLOYING unless it already is (or is DEPLOYED), within the
 * account's limit of active deployments (enterprise accounts have none). The account
 * row is locked for the check, so concurrent deploys cannot overshoot the limit.
 */
export async function startDeployment(db: Db, accountId: string, modelId: string): Promise<StartDeploymentResult> {
  return db.transaction(async (tx) => {
    const owner = await tx
      .select({ enterprise: accounts.enterprise, limit: accounts.maxDeployedModels })
      .from(accounts)
      .where(eq(accounts.id, accountId))
      .for("update");
    if (owner.length === 0) return { outcome: "no-account" } as const;
    const current = await getDeployment(tx, accountId, modelId);
    if (current && (current.state === "DEPLOYING" || current.state === "DEPLOYED")) {
      return { outcome: "already", deployment: current } as const;
    }
    if (current?.state === "UNDEPLOYING") return { outcome: "busy", deployment: current } as const;
    const { enterprise, limit } = owner[0]!;
    if (!enterprise && (await countDeployments(tx, accountId, ACTIVE_DEPLOYMENT_STATES)) >= limit) {
      return { outcome: "limit", limit } as const;
    }
    const deployment = await setDeploymentState(tx, accountId, modelId, "DEPLOYING", { deployedAt: null });
    return { outcome: "started", deployment } as const;
  });
}

/** Whether another model's deployment in `states` uses the artifact. */
export async function artifactDeployed(
  db: Db,
  artifactPath: string,
  except: { accountId: string; modelId: string },
  states: readonly DeploymentState[] = ["DEPLOYED", "DEPLOYING"],
): Promise<boolean> {
  const other = await db.query.deployments.findFirst({
    columns: { modelId: true },
    where: and(
      eq(deployments.artifactPath, artifactPath),
      inArray(deployments.state, [...states]),
      not(modelKey(deployments, except.accountId, except.modelId)),
    ),
  });
  return other !== undefined;
}
