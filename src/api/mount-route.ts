import type { RouteConfigToTypedResponse } from "@hono/zod-openapi";
import type { Context, Hono } from "hono";
import type { z } from "zod";
import type { AppEnv } from "./app-env.js";
import type { ContractRoute } from "./contract/route.js";
import { parseBody, parseQuery } from "./middleware/parse-body.js";
import { checkScope } from "./middleware/check-scope.js";

type SchemaOf<T> = T extends z.ZodType ? T : never;
type JsonBodyOf<R> = R extends { request: { body: { content: { "application/json": { schema: infer S } } } } }
  ? z.output<SchemaOf<S>>
  : undefined;
type QueryOf<R> = R extends { request: { query: infer S } } ? z.output<SchemaOf<S>> : undefined;
type ParamsOf<R> = R extends { request: { params: infer S } } ? z.output<SchemaOf<S>> : Record<string, never>;

/** What a handler gets from the request, as the route's contract types it. */
export interface RouteInput<R> {
  body: JsonBodyOf<R>;
  query: QueryOf<R>;
  /** The path parameters, as written (the services check them; see contract/management/params.ts). */
  params: ParamsOf<R>;
}

/**
 * What a handler may answer: one of the route's own responses, body and status (a stream,
 * an image: any Response where the route documents such a content type). Errors are thrown.
 */
type RouteAnswer<R extends ContractRoute> = RouteConfigToTypedResponse<R> | Promise<RouteConfigToTypedResponse<R>>;

/**
 * Mounts a contract route on the app. The JSON body and the query string are read and
 * validated with the route's own schemas, by Hearth's parser: its 400s are the OpenAI error
 * body naming the field (`messages[0].role`), whatever the Content-Type, which
 * OpenAPIHono's validators would answer differently (415, their own error shape). Before
 * anything is read, the caller's key must have the scope the route declares: the one place
 * scopes are checked for the API (docs/security.md).
 */
export function mountRoute<R extends ContractRoute>(
  app: Hono<AppEnv>,
  route: R,
  handler: (c: Context<AppEnv>, input: RouteInput<R>) => RouteAnswer<R>,
): void {
  const json = route.request?.body?.content?.["application/json"] as { schema?: z.ZodType } | undefined;
  const body = json?.schema;
  const query = route.request?.query as z.ZodType | undefined;
  const scope = route.scope;
  app.on(route.method.toUpperCase(), route.getRoutingPath(), async (c) => {
    if (scope !== "public") checkScope(c.get("caller"), scope);
    const input = {
      body: body ? await parseBody(c, body) : undefined,
      query: query ? parseQuery(c, query) : undefined,
      params: c.req.param(),
    };
    return handler(c, input as RouteInput<R>);
  });
}
