import { Hono } from "hono";
import { HEARTH_VERSION } from "../package-info.js";
import type { AppEnv } from "./app-env.js";

/** GET /v1/version: the server's version (package.json), public like the OpenAPI document. */
export function versionRoutes() {
  return new Hono<AppEnv>().get("/v1/version", (c) => c.json({ version: HEARTH_VERSION }));
}
