import { serveStatic } from "@hono/node-server/serve-static";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { HonoAdapter } from "@bull-board/hono";
import type { Context, Hono } from "hono";
import type { AppDeps, AppEnv } from "../app-env.js";
import { hearthQueues } from "../services/hearth-queues.js";
import { liveWorkers } from "../../jobs/worker-registry.js";
import { contentSecurityPolicy, setAssetHeaders, setPageHeaders } from "../middleware/security-headers.js";

const BOARD_PATH = "/admin/queues";
/** How long the board's list of queues is reused (its page polls every few seconds). */
const QUEUE_LIST_TTL_MS = 10_000;

/**
 * Hearth's policy, plus inline styles: bull-board's page carries style attributes and a <style>
 * element, and its React code adds <style> elements as it runs, so neither a hash nor a nonce
 * could cover them. Scripts stay 'self' only: its one inline script is JSON data
 * (type="application/json"), which a policy does not govern since it never runs.
 */
const BOARD_CSP = contentSecurityPolicy({ "style-src": ["'unsafe-inline'"] });

/**
 * bull-board's page links its fonts from Google. Hearth's pages load nothing from elsewhere (an
 * operator's browser tells no third party it is looking, and offline it could not), so the
 * link goes and the board uses the browser's own sans-serif.
 */
const GOOGLE_FONTS_LINK = /<link\b[^>]*\bhref="https:\/\/fonts\.googleapis\.com\/[^"]*"[^>]*>\s*/g;

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
  app.use(`${BOARD_PATH}/*`, async (c, next) => {
    await next();
    if (c.req.path.startsWith(`${BOARD_PATH}/static/`)) return setAssetHeaders(c, BOARD_CSP);
    if (c.res.headers.get("content-type")?.startsWith("text/html")) await dropGoogleFonts(c);
    setPageHeaders(c, BOARD_CSP);
  });
  app.route(BOARD_PATH, adapter.registerPlugin());
}

async function dropGoogleFonts(c: Context): Promise<void> {
  const page = await c.res.text();
  const headers = new Headers(c.res.headers);
  headers.delete("content-length");
  c.res = new Response(page.replace(GOOGLE_FONTS_LINK, ""), { status: c.res.status, headers });
}
