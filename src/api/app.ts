import { Hono, type MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { AppError } from "../errors.js";
import type { AppDeps, AppEnv } from "./app-env.js";
import { accountRoutes } from "./management/account-routes.js";
import { apiKeyRoutes } from "./management/api-key-routes.js";
import { usageRoutes } from "./management/usage-routes.js";
import { filesRoutes } from "./openai/files.js";
import { batchesRoutes } from "./openai/batches.js";
import { lifecycleRoutes } from "./management/lifecycle-routes.js";
import { modelRoutes } from "./management/model-routes.js";
import { imageRoutes } from "./images/image-routes.js";
import { queueBoardRoutes } from "./admin/admin-pages.js";
import { metricsRoutes } from "./admin/metrics-route.js";
import { adminRoutes } from "./admin/admin-routes.js";
import { requireApiKey } from "./middleware/auth.js";
import { intake, intakeBeforeAuth } from "./middleware/intake.js";
import { readBody } from "./middleware/read-body.js";
import { renderError, renderNotFound } from "./middleware/errors.js";
import { chatCompletionsRoutes } from "./openai/chat-completions.js";
import { completionsRoutes } from "./openai/completions.js";
import { embeddingsRoutes } from "./openai/embeddings.js";
import { modelsRoutes } from "./openai/models.js";
import { streamsRoutes } from "./openai/streams.js";
import { logRequests } from "./request-log.js";
import { serviceRoutes } from "./service-routes.js";
import { webRoutes } from "./web/web-routes.js";

const UPLOAD_PATH = /^\/v1\/accounts\/[^/]+\/models\/[^/]+\/files\/[^/]+$/;
/** The routes that queue a generation, whose requests pass the intake gate (limits/intake-gate.ts). */
const GENERATION_PATHS = [
  "/v1/completions",
  "/v1/chat/completions",
  "/v1/embeddings",
  "/v1/image_generation/*",
  "/v1/images/generations",
];
const IMAGE_UPLOAD_PATH = /^\/v1\/image_generation\/accounts\/[^/]+\/models\/[^/]+\/(image_to_image|control_net)$/;

/**
 * The HTTP API: every route of the contract (src/api/contract), mounted with its handler.
 * Order matters: the public routes answer before the /v1 middleware (body read, API key)
 * that every later route passes through.
 */
export function createApp(deps: AppDeps) {
  const app = new Hono<AppEnv>();
  app.onError(renderError(deps.log));
  app.notFound(renderNotFound);
  app.use("*", logRequests(deps.log));
  // Every answer is counted by its route's pattern (not its path: the label set stays small).
  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    // The handler's own route (middleware entries are method ALL); none matched: a 404.
    const route = matchedRoutes(c).findLast((r) => r.method !== "ALL")?.path ?? "(none)";
    const labels = { method: c.req.method, route };
    deps.metrics?.httpRequests.inc({ ...labels, status: String(c.res.status) });
    deps.metrics?.httpDuration.observe(labels, (performance.now() - started) / 1000);
  });
  // Shutting down: the listener is closed, but a kept-alive connection could still bring new
  // requests. Each gets a 503 (retry elsewhere) that closes its connection; the requests and
  // streams already running finish (HEARTH_API_DRAIN_MS).
  app.use("*", async (c, next) => {
    if (deps.draining?.()) {
      c.header("connection", "close");
      throw new AppError("unavailable", "This server is shutting down; please retry.");
    }
    await next();
  });
  serviceRoutes(app, deps);
  webRoutes(app, deps);
  queueBoardRoutes(app, deps);
  metricsRoutes(app, deps);

  // Every /v1 body but an upload's is read whole, bounded in size and time, before the intake
  // gate: a slow body never holds one of its account's intake places. It is read after
  // authentication (an unknown client's body is never buffered), except for a key whose check
  // is reused, whose request is placed before authentication (middleware/intake.ts).
  const timeoutMs = deps.config.bodyTimeoutMs;
  const jsonBody = readBody({
    maxBytes: deps.config.maxBodyBytes,
    timeoutMs,
    tooLarge: `The request body is larger than ${deps.config.maxBodyBytes} bytes.`,
  });
  // An image request's form carries one image: its limit is the image's (HEARTH_MAX_IMAGE_BYTES) and a margin.
  const imageForm = readBody({
    maxBytes: deps.config.images.maxImageBytes + 64 * 1024,
    timeoutMs,
    tooLarge: `The request body is larger than ${deps.config.images.maxImageBytes} bytes (HEARTH_MAX_IMAGE_BYTES) and its fields.`,
  });
  // A batch's input file, under its own limit (HEARTH_MAX_BATCH_FILE_BYTES) and a margin for the
  // form, in the body deadline plus the time the largest takes at 256 KiB/s (800 s for 200 MiB).
  // Files are not generations: a slow one holds no intake place, only its own socket.
  const fileForm = readBody({
    maxBytes: deps.config.batch.maxFileBytes + 64 * 1024,
    timeoutMs: timeoutMs + Math.ceil(deps.config.batch.maxFileBytes / (256 * 1024)) * 1000,
    tooLarge: `The file is larger than ${deps.config.batch.maxFileBytes} bytes (HEARTH_MAX_BATCH_FILE_BYTES).`,
  });
  // File uploads stream to storage under their own limit (HEARTH_MAX_UPLOAD_BYTES).
  const body: MiddlewareHandler = (c, next) => {
    if (c.req.method === "PUT" && UPLOAD_PATH.test(c.req.path)) return next();
    if (c.req.method === "POST" && c.req.path === "/v1/files") return fileForm(c, next);
    return IMAGE_UPLOAD_PATH.test(c.req.path) ? imageForm(c, next) : jsonBody(c, next);
  };
  for (const path of GENERATION_PATHS) app.use(path, intakeBeforeAuth(deps.intake, deps.apiKeys, body));
  app.use("/v1/*", requireApiKey(deps));
  app.use("/v1/*", body);
  for (const path of GENERATION_PATHS) app.use(path, intake(deps.intake));
  for (const mount of [
    completionsRoutes,
    chatCompletionsRoutes,
    embeddingsRoutes,
    streamsRoutes,
    modelsRoutes,
    accountRoutes,
    apiKeyRoutes,
    usageRoutes,
    filesRoutes,
    batchesRoutes,
    modelRoutes,
    lifecycleRoutes,
    imageRoutes,
    adminRoutes,
  ]) {
    mount(app, deps);
  }
  return app;
}
