import { serveStatic } from "@hono/node-server/serve-static";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { HonoAdapter } from "@bull-board/hono";
import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { hearthQueues } from "../services/hearth-queues.js";
import { liveWorkers } from "../../queues/worker-registry.js";

const BOARD_PATH = "/admin/queues";
/** How long the board's list of queues is reused (its page polls every few seconds). */
const QUEUE_LIST_TTL_MS = 10_000;

/**
 * `/admin/queues`: bull-board over every Hearth queue. app.ts puts the admin-session guard in
 * front of everything under /admin.
 */
export function queueBoardRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  const adapter = new HonoAdapter(serveStatic).setBasePath(BOARD_PATH);
  const board = createBullBoard({
    queues: [],
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: "Hearth queues", miscLinks: [{ text: "Models", url: "/models" }] } },
  });
  let listedAt = 0;
  app.use(`${BOARD_PATH}/*`, async (_c, next) => {
    if (Date.now() - listedAt > QUEUE_LIST_TTL_MS) {
      const workers = await liveWorkers(deps.redis, deps.config.redisPrefix);
      board.replaceQueues((await hearthQueues(deps.db, deps.queues, workers)).map((q) => new BullMQAdapter(q)));
      listedAt = Date.now();
    }
    await next();
  });
  app.route(BOARD_PATH, adapter.registerPlugin());
}
