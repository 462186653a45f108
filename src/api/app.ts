import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError } from "../errors.js";
import type { AppDeps, AppEnv } from "./app-env.js";
import { healthRoutes } from "./health.js";
import { requireApiKey } from "./middleware/auth.js";
import { renderError, renderNotFound } from "./middleware/errors.js";
import { chatCompletionsRoutes } from "./openai/chat-completions.js";
import { completionsRoutes } from "./openai/completions.js";
import { embeddingsRoutes } from "./openai/embeddings.js";
import { modelsRoutes } from "./openai/models.js";
import { accountRoutes } from "./management/account-routes.js";
import { deploymentRoutes } from "./management/deployment-routes.js";
import { fileRoutes } from "./management/file-routes.js";
import { modelRoutes } from "./management/model-routes.js";
import { openApiRoutes } from "./openapi/openapi-routes.js";
import { versionRoutes } from "./version.js";

const UPLOAD_PATH = /^\/v1\/accounts\/[^/]+\/models\/[^/]+\/files\/[^/]+$/;

export function createApp(deps: AppDeps) {
  const app = new Hono<AppEnv>();
  app.onError(renderError(deps.log));
  app.notFound(renderNotFound);
  app.route("/", healthRoutes(deps));

  app.route("/", openApiRoutes());
  // Public, mounted before the key check of /v1.
  app.route("/", versionRoutes());

  const v1 = new Hono<AppEnv>();
  const jsonLimit = bodyLimit({
    maxSize: deps.config.maxBodyBytes,
    onError: () => {
      throw new AppError("payload_too_large", `The request body is larger than ${deps.config.maxBodyBytes} bytes.`);
    },
  });
  // File uploads stream to storage under their own limit (HEARTH_MAX_UPLOAD_BYTES).
  v1.use((c, next) => (c.req.method === "PUT" && UPLOAD_PATH.test(c.req.path) ? next() : jsonLimit(c, next)));
  v1.use(requireApiKey(deps.apiKeys));
  v1.route("/", completionsRoutes(deps));
  v1.route("/", chatCompletionsRoutes(deps));
  v1.route("/", embeddingsRoutes(deps));
  v1.route("/", modelsRoutes(deps));
  v1.route("/", accountRoutes(deps));
  v1.route("/", modelRoutes(deps));
  v1.route("/", fileRoutes(deps));
  v1.route("/", deploymentRoutes(deps));
  app.route("/v1", v1);
  return app;
}
