import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError } from "../errors.js";
import type { AppDeps, AppEnv } from "./app-env.js";
import { accountRoutes } from "./management/account-routes.js";
import { lifecycleRoutes } from "./management/lifecycle-routes.js";
import { modelRoutes } from "./management/model-routes.js";
import { requireApiKey } from "./middleware/auth.js";
import { renderError, renderNotFound } from "./middleware/errors.js";
import { chatCompletionsRoutes } from "./openai/chat-completions.js";
import { completionsRoutes } from "./openai/completions.js";
import { embeddingsRoutes } from "./openai/embeddings.js";
import { modelsRoutes } from "./openai/models.js";
import { serviceRoutes } from "./service-routes.js";

const UPLOAD_PATH = /^\/v1\/accounts\/[^/]+\/models\/[^/]+\/files\/[^/]+$/;

/**
 * The HTTP API: every route of the contract (src/api/contract), mounted with its handler.
 * Order matters: the public routes answer before the /v1 middleware (body limit, API key)
 * that every later route passes through.
 */
export function createApp(deps: AppDeps) {
  const app = new Hono<AppEnv>();
  app.onError(renderError(deps.log));
  app.notFound(renderNotFound);
  serviceRoutes(app, deps);

  const jsonLimit = bodyLimit({
    maxSize: deps.config.maxBodyBytes,
    onError: () => {
      throw new AppError("payload_too_large", `The request body is larger than ${deps.config.maxBodyBytes} bytes.`);
    },
  });
  // File uploads stream to storage under their own limit (HEARTH_MAX_UPLOAD_BYTES).
  app.use("/v1/*", (c, next) => (c.req.method === "PUT" && UPLOAD_PATH.test(c.req.path) ? next() : jsonLimit(c, next)));
  app.use("/v1/*", requireApiKey(deps.apiKeys));
  for (const mount of [
    completionsRoutes,
    chatCompletionsRoutes,
    embeddingsRoutes,
    modelsRoutes,
    accountRoutes,
    modelRoutes,
    lifecycleRoutes,
  ]) {
    mount(app, deps);
  }
  return app;
}
