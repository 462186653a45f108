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

export function createApp(deps: AppDeps) {
  const app = new Hono<AppEnv>();
  app.onError(renderError(deps.log));
  app.notFound(renderNotFound);
  app.route("/", healthRoutes(deps));

  const v1 = new Hono<AppEnv>();
  v1.use(
    bodyLimit({
      maxSize: deps.config.maxBodyBytes,
      onError: () => {
        throw new AppError("payload_too_large", `The request body is larger than ${deps.config.maxBodyBytes} bytes.`);
      },
    }),
  );
  v1.use(requireApiKey(deps.db));
  v1.route("/", completionsRoutes(deps));
  v1.route("/", chatCompletionsRoutes(deps));
  v1.route("/", embeddingsRoutes(deps));
  v1.route("/", modelsRoutes(deps));
  app.route("/v1", v1);
  return app;
}
