import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import type { ModelList } from "../contract/openai/responses.js";
import { modelsRoute } from "../contract/openai/routes.js";
import { mountRoute } from "../mount-route.js";

export function modelsRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  mountRoute(app, modelsRoute, async (c) => {
    const models = await deps.models.list(c.get("caller").accountId);
    const reply: ModelList = {
      object: "list",
      data: models.map((m) => ({
        id: m.name,
        object: "model",
        created: Math.floor(m.createdAt.getTime() / 1000),
        owned_by: m.accountId,
        kind: m.kind,
        parent: m.parent,
        context_length: m.contextLength,
      })),
    };
    return c.json(reply, 200);
  });
}
