import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import {
  createModelRoute,
  deleteModelRoute,
  getModelRoute,
  listModelsRoute,
  updateModelRoute,
} from "../contract/management/model-routes.js";
import type { ModelPage } from "../contract/management/resources.js";
import { mountRoute } from "../mount-route.js";
import { pageTokens, parseModelFilter } from "./model-list-query.js";
import { modelResource } from "../services/resources.js";

/** Create, read, list, update and delete an account's models. */
export function modelRoutes(app: Hono<AppEnv>, { management }: AppDeps) {
  const { catalog, deletion } = management;
  mountRoute(app, createModelRoute, async (c, { body, params }) => {
    const { model, deployment } = await catalog.create(c.get("caller"), params.account_id, {
      modelId: body.modelId,
      ...body.model,
    });
    return c.json(modelResource(model, deployment, []), 201);
  });
  mountRoute(app, listModelsRoute, async (c, { query, params }) => {
    const page = await catalog.list(c.get("caller"), params.account_id, {
      limit: query.pageSize,
      afterModelId: query.pageToken ? pageTokens.decode(query.pageToken) : undefined,
      filter: parseModelFilter(query.filter),
    });
    const reply: ModelPage = {
      models: page.models.map((v) => modelResource(v.model, v.deployment)),
      nextPageToken: page.nextPageToken ? pageTokens.encode(page.nextPageToken) : "",
    };
    return c.json(reply, 200);
  });
  mountRoute(app, getModelRoute, async (c, { params }) => {
    const { model, deployment } = await catalog.get(c.get("caller"), params.account_id, params.model_id);
    const files = model.kind === "lora" ? await catalog.files(model) : undefined;
    return c.json(modelResource(model, deployment, files), 200);
  });
  mountRoute(app, updateModelRoute, async (c, { body, params }) => {
    const { model, deployment } = await catalog.update(c.get("caller"), params.account_id, params.model_id, body);
    return c.json(modelResource(model, deployment), 200);
  });
  mountRoute(app, deleteModelRoute, async (c, { query, params }) => {
    await deletion.delete(c.get("caller"), params.account_id, params.model_id, { force: query.force });
    return c.json({}, 200);
  });
}
