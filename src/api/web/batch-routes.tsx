import { Readable } from "node:stream";
import type { Hono } from "hono";
import type { Caller } from "../../domain/caller.js";
import type { AppDeps, AppEnv } from "../app-env.js";
import { downloadHeaders } from "../file-download.js";
import { checkScope } from "../middleware/check-scope.js";
import { setPageHeaders } from "../middleware/security-headers.js";
import { BatchesPage, BatchPage } from "./batch-pages.js";
import type { PageKit } from "./page-kit.js";

/** Batches a page of `/batches` shows. */
const PAGE_SIZE = 50;

/**
 * `/batches`, `/batches/<id>` and `/files/<id>/content`: the signed-in account's batches, their
 * files to download, and Cancel. The Batches and BatchFiles services are the API's own, with the
 * session's account as the caller, so another account's batch or file is a 404 page here as it
 * is a 404 there; and the session's key needs the scope the API's batch routes need.
 */
export function batchPageRoutes(app: Hono<AppEnv>, { management }: AppDeps, kit: PageKit) {
  const { page, html, formGuard } = kit;
  const { batches, files } = management;
  const mayRun = (caller: Caller) => checkScope(caller, "inference");

  app.get(
    "/batches",
    page(async (c, session, caller) => {
      mayRun(caller);
      const after = c.req.query("after") || undefined;
      const { rows, hasMore } = await batches.list(caller, { after, limit: PAGE_SIZE });
      const poll = `/v1/batches?${new URLSearchParams({ limit: String(PAGE_SIZE), ...(after ? { after } : {}) })}`;
      const older = hasMore ? rows.at(-1)?.id : undefined;
      return html(c, <BatchesPage session={session} batches={rows} older={older} poll={poll} now={Date.now()} />);
    }),
  );

  app.get(
    "/batches/:id",
    page(async (c, session, caller) => {
      mayRun(caller);
      const batch = await batches.get(caller, c.req.param("id")!);
      return html(c, <BatchPage session={session} batch={batch} />);
    }),
  );

  app.post(
    "/batches/:id/cancel",
    ...formGuard,
    page(async (c, session, caller) => {
      if (!kit.sameForm(await c.req.parseBody(), session)) return kit.foreignForm(c, session);
      mayRun(caller);
      const batch = await batches.cancel(caller, c.req.param("id")!);
      return c.redirect(`/batches/${encodeURIComponent(batch.id)}`, 303);
    }),
  );

  app.get(
    "/files/:id/content",
    page(async (c, _session, caller) => {
      mayRun(caller);
      const { file, body } = await files.content(caller, c.req.param("id")!);
      setPageHeaders(c);
      return c.body(Readable.toWeb(body) as ReadableStream, 200, downloadHeaders(file));
    }),
  );
}
