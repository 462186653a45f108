import { Hono } from "hono";
import type { AppEnv } from "../app-env.js";
import { openApiDocument } from "./openapi-document.js";

/** The OpenAPI description of the whole HTTP API, public (no key needed) at /openapi.json and /v1/openapi.json. */
export function openApiRoutes() {
  const document = openApiDocument();
  return new Hono<AppEnv>()
    .get("/openapi.json", (c) => c.json(document))
    .get("/v1/openapi.json", (c) => c.json(document));
}
