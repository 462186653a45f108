import type { Context, Hono } from "hono";
import { AppError } from "../../errors.js";
import type { AppDeps, AppEnv } from "../app-env.js";
import type { ModelList, ModelObject } from "../contract/openai/responses.js";
import { modelsRoute, retrieveModelByPathRoute, retrieveModelRoute } from "../contract/openai/routes.js";
import { mountRoute } from "../mount-route.js";
import type { ModelListing } from "../services/model-resolver.js";

export function modelsRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  mountRoute(app, modelsRoute, async (c) => {
    const models = await deps.models.list(c.get("caller").accountId);
    return c.json({ object: "list", data: models.map(modelObject) } satisfies ModelList, 200);
  });

  // The path with the name as it is goes first: its segments are no single encoded name.
  mountRoute(app, retrieveModelByPathRoute, async (c, { params }) =>
    c.json(await retrieve(c, deps, `accounts/${params.account_id}/models/${params.model_id}`), 200),
  );
  mountRoute(app, retrieveModelRoute, async (c, { params }) => c.json(await retrieve(c, deps, params.model), 200));
}

/** One of the models the caller may query now (GET /v1/models lists them), or the 404 of any other name. */
async function retrieve(c: Context<AppEnv>, deps: AppDeps, name: string): Promise<ModelObject> {
  const models = await deps.models.list(c.get("caller").accountId);
  const found = models.find((m) => m.name === name);
  if (!found) {
    throw new AppError(
      "not_found",
      `The model \`${name}\` does not exist, is not deployed, or you do not have access to it. GET /v1/models lists the models you can query.`,
      { param: "model" },
    );
  }
  return modelObject(found);
}

function modelObject(m: ModelListing): ModelObject {
  return {
    id: m.name,
    object: "model",
    created: Math.floor(m.createdAt.getTime() / 1000),
    owned_by: m.accountId,
    kind: m.kind,
    parent: m.parent,
    context_length: m.contextLength,
  };
}
