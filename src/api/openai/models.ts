import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";

export function modelsRoutes(deps: AppDeps) {
  return new Hono<AppEnv>().get("/models", async (c) => {
    const models = await deps.models.list(c.get("caller").accountId);
    return c.json({
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
    });
  });
}
