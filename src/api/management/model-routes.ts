import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { parseBody, parseQuery } from "../middleware/parse-body.js";
import {
  createModelBody,
  deleteModelQuery,
  listModelsQuery,
  pageTokens,
  parseModelFilter,
  updateModelBody,
} from "./protocol.js";
import { modelResource } from "./resources.js";

/** Create, read, list, update and delete an account's models. */
export function modelRoutes({ management }: AppDeps) {
  const { catalog, deletion } = management;
  return new Hono<AppEnv>()
    .post("/accounts/:accountId/models", async (c) => {
      const body = await parseBody(c, createModelBody);
      const { model, deployment } = await catalog.create(c.get("caller"), c.req.param("accountId"), {
        modelId: body.modelId,
        ...body.model,
      });
      return c.json(modelResource(model, deployment, []), 201);
    })
    .get("/accounts/:accountId/models", async (c) => {
      const query = parseQuery(c, listModelsQuery);
      const page = await catalog.list(c.get("caller"), c.req.param("accountId"), {
        limit: query.pageSize,
        afterModelId: query.pageToken ? pageTokens.decode(query.pageToken) : undefined,
        filter: parseModelFilter(query.filter),
      });
      return c.json({
        models: page.models.map((v) => modelResource(v.model, v.deployment)),
        nextPageToken: page.nextPageToken ? pageTokens.encode(page.nextPageToken) : "",
      });
    })
    .get("/accounts/:accountId/models/:modelId", async (c) => {
      const { model, deployment } = await catalog.get(
        c.get("caller"),
        c.req.param("accountId"),
        c.req.param("modelId"),
      );
      const files = model.kind === "lora" ? await catalog.files(model) : undefined;
      return c.json(modelResource(model, deployment, files));
    })
    .patch("/accounts/:accountId/models/:modelId", async (c) => {
      const body = await parseBody(c, updateModelBody);
      const { model, deployment } = await catalog.update(
        c.get("caller"),
        c.req.param("accountId"),
        c.req.param("modelId"),
        body,
      );
      return c.json(modelResource(model, deployment));
    })
    .delete("/accounts/:accountId/models/:modelId", async (c) => {
      const { force } = parseQuery(c, deleteModelQuery);
      await deletion.delete(c.get("caller"), c.req.param("accountId"), c.req.param("modelId"), { force });
      return c.json({});
    });
}
