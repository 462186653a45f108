import { and, asc, eq, gt, inArray, not, or, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { BUILTIN_ACCOUNT_ID } from "../schema/accounts.js";
import { deployments, type Deployment } from "../schema/deployments.js";
import { models, type Model, type ModelKind, type ModelState, type NewModel } from "../schema/models.js";
import { modelKey } from "./model-key.js";

export interface UpsertBaseModelInput {
  accountId?: string;
  modelId: string;
  /** `base` (a GGUF file, the default) or `image` (an image model; no file). */
  kind?: "base" | "image";
  filePath: string | null;
  contextLength: number | null;
  embeddingLength: number | null;
  displayName: string;
  description?: string;
  conversationConfig?: Record<string, unknown> | null;
}

/** Fields of a model that may change after creation. */
export type ModelPatch = Partial<
  Pick<
    NewModel,
    | "displayName"
    | "description"
    | "state"
    | "stateReason"
    | "filePath"
    | "contextLength"
    | "embeddingLength"
    | "conversationConfig"
    | "public"
    | "baseModel"
    | "adapterFormat"
    | "adapterRank"
    | "artifactKey"
  >
>;

export interface ListModelsFilter {
  kind?: ModelKind;
  state?: ModelState;
  baseModel?: string;
  /** Only public models (what other accounts may list of the built-in account). */
  publicOnly?: boolean;
}

export interface ModelPageRequest {
  filter?: ListModelsFilter;
  /** Only models whose ID sorts after this one. */
  afterModelId?: string;
  limit: number;
}

/**
 * Registers (or refreshes) an operator-provided model, a GGUF base model or an image
 * model, as READY and public, by default of the built-in account.
 */
export async function upsertBaseModel(db: Db, input: UpsertBaseModelInput): Promise<Model> {
  const fields = {
    kind: input.kind ?? "base",
    baseModel: null,
    state: "READY" as const,
    stateReason: null,
    filePath: input.filePath,
    contextLength: input.contextLength,
    embeddingLength: input.embeddingLength,
    displayName: input.displayName,
    description: input.description ?? "",
    conversationConfig: input.conversationConfig ?? null,
    public: true,
  };
  const rows = await db
    .insert(models)
    .values({ accountId: input.accountId ?? BUILTIN_ACCOUNT_ID, modelId: input.modelId, ...fields })
    .onConflictDoUpdate({
      target: [models.accountId, models.modelId],
      set: { ...fields, updatedAt: sql`now()` },
    })
    .returning();
  return rows[0]!;
}

/** Creates a model; null when the account already has one with this ID. */
export async function createModel(db: Db, input: NewModel): Promise<Model | null> {
  const rows = await db
    .insert(models)
    .values(input)
    .onConflictDoNothing({ target: [models.accountId, models.modelId] })
    .returning();
  return rows[0] ?? null;
}

/** A model by its owner, without any visibility check. */
/** How many models an account has (its quota counts them). */
export async function countModels(db: Db, accountId: string): Promise<number> {
  const rows = await db.select({ n: sql<number>`count(*)::int` }).from(models).where(eq(models.accountId, accountId));
  return Number(rows[0]?.n ?? 0);
}

export async function getModel(db: Db, accountId: string, modelId: string): Promise<Model | null> {
  return (await db.query.models.findFirst({ where: modelKey(models, accountId, modelId) })) ?? null;
}

/**
 * `accounts/<owner>/models/<modelId>` as the caller may see it: its own models and
 * public ones. Another account's private model is reported exactly like a missing one.
 */
export async function getVisibleModel(
  db: Db,
  callerAccountId: string,
  ownerAccountId: string,
  modelId: string,
): Promise<Model | null> {
  return (await db.query.models.findFirst({ where: visibleModel(callerAccountId, ownerAccountId, modelId) })) ?? null;
}

/** The caller's own models and the public ones, by owner then ID. */
export async function listVisibleModels(
  db: Db,
  callerAccountId: string,
  filter: ListModelsFilter = {},
): Promise<Model[]> {
  return db
    .select()
    .from(models)
    .where(and(or(eq(models.accountId, callerAccountId), eq(models.public, true)), ...filterConditions(filter)))
    .orderBy(asc(models.accountId), asc(models.modelId));
}

/** One account's own models. */
export async function listModels(db: Db, accountId: string, filter: ListModelsFilter = {}): Promise<Model[]> {
  return db
    .select()
    .from(models)
    .where(and(eq(models.accountId, accountId), ...filterConditions(filter)))
    .orderBy(asc(models.modelId));
}

/** One page of an account's models in ID order (keyset pagination). */
export async function listModelsPage(db: Db, accountId: string, page: ModelPageRequest): Promise<Model[]> {
  return db
    .select()
    .from(models)
    .where(
      and(
        eq(models.accountId, accountId),
        page.afterModelId === undefined ? undefined : gt(models.modelId, page.afterModelId),
        ...filterConditions(page.filter ?? {}),
      ),
    )
    .orderBy(asc(models.modelId))
    .limit(page.limit);
}

function filterConditions(filter: ListModelsFilter) {
  return [
    filter.kind === undefined ? undefined : eq(models.kind, filter.kind),
    filter.state === undefined ? undefined : eq(models.state, filter.state),
    filter.baseModel === undefined ? undefined : eq(models.baseModel, filter.baseModel),
    filter.publicOnly ? eq(models.public, true) : undefined,
  ];
}

/** Whether a model other than the given one uses an artifact (converted adapters are shared by content). */
export async function artifactInUse(
  db: Db,
  artifactKey: string,
  except: { accountId: string; modelId: string },
): Promise<boolean> {
  const other = await db.query.models.findFirst({
    columns: { modelId: true },
    where: and(eq(models.artifactKey, artifactKey), not(modelKey(models, except.accountId, except.modelId))),
  });
  return other !== undefined;
}

/** Changes a model's fields and bumps updated_at; null when no such model. */
export async function updateModel(
  db: Db,
  accountId: string,
  modelId: string,
  patch: ModelPatch,
): Promise<Model | null> {
  const rows = await db
    .update(models)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(modelKey(models, accountId, modelId))
    .returning();
  return rows[0] ?? null;
}

/** Moves a model to `to` only from one of `from` (compare and set); null when absent or in another state. */
export async function transitionModelState(
  db: Db,
  accountId: string,
  modelId: string,
  from: readonly ModelState[],
  to: ModelState,
  patch: ModelPatch = {},
): Promise<Model | null> {
  const rows = await db
    .update(models)
    .set({ stateReason: null, ...patch, state: to, updatedAt: sql`now()` })
    .where(and(modelKey(models, accountId, modelId), inArray(models.state, [...from])))
    .returning();
  return rows[0] ?? null;
}

export async function setModelState(
  db: Db,
  accountId: string,
  modelId: string,
  state: ModelState,
  reason: string | null = null,
): Promise<Model | null> {
  return updateModel(db, accountId, modelId, { state, stateReason: reason });
}

/** Deletes a model (and its deployment); false when no such model. */
export async function deleteModel(db: Db, accountId: string, modelId: string): Promise<boolean> {
  const rows = await db
    .delete(models)
    .where(modelKey(models, accountId, modelId))
    .returning({ modelId: models.modelId });
  return rows.length > 0;
}

export interface ModelWithDeployment {
  model: Model;
  deployment: Deployment | null;
}

/** The model `owner/modelId` if the caller may see it: its own, or a public one. */
function visibleModel(callerAccountId: string, ownerAccountId: string, modelId: string) {
  return and(
    modelKey(models, ownerAccountId, modelId),
    or(eq(models.accountId, callerAccountId), eq(models.public, true)),
  );
}

/** getVisibleModel, with the model's deployment, in one query (the inference path). */
export async function getVisibleModelWithDeployment(
  db: Db,
  callerAccountId: string,
  ownerAccountId: string,
  modelId: string,
): Promise<ModelWithDeployment | null> {
  const rows = await db
    .select({ model: models, deployment: deployments })
    .from(models)
    .leftJoin(deployments, modelKey(deployments, models.accountId, models.modelId))
    .where(visibleModel(callerAccountId, ownerAccountId, modelId))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * What a caller can query now: the public READY base and image models and its own
 * DEPLOYED adapters, by owner then ID.
 */
export async function listServableModels(db: Db, callerAccountId: string): Promise<Model[]> {
  const rows = await db
    .select({ model: models })
    .from(models)
    .leftJoin(deployments, modelKey(deployments, models.accountId, models.modelId))
    .where(
      or(
        and(
          inArray(models.kind, ["base", "image"]),
          eq(models.state, "READY"),
          or(eq(models.public, true), eq(models.accountId, callerAccountId)),
        ),
        and(eq(models.kind, "lora"), eq(models.accountId, callerAccountId), eq(deployments.state, "DEPLOYED")),
      ),
    )
    .orderBy(asc(models.accountId), asc(models.modelId));
  return rows.map((r) => r.model);
}
