import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { modelResource } from "./resources.js";

/** Deploy and undeploy: both answer at once with the model; its `deployment` shows the progress. */
export function deploymentRoutes({ management }: AppDeps) {
  const { deployments } = management;
  return new Hono<AppEnv>()
    .post("/accounts/:accountId/models/:modelId/deploy", async (c) => {
      const { model, deployment } = await deployments.deploy(
        c.get("caller"),
        c.req.param("accountId"),
        c.req.param("modelId"),
      );
      return c.json(modelResource(model, deployment));
    })
    .post("/accounts/:accountId/models/:modelId/undeploy", async (c) => {
      const { model, deployment } = await deployments.undeploy(
        c.get("caller"),
        c.req.param("accountId"),
        c.req.param("modelId"),
      );
      return c.json(modelResource(model, deployment));
    });
}
