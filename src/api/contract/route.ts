import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import { AUTHENTICATED, errorResponses, type Reasons } from "./errors.js";

/** A route of Hearth's HTTP API: createRoute's config plus the conventions every operation shares. */
export type ContractRouteSpec = Omit<RouteConfig, "tags" | "security"> & {
  /** The tag (section) of the document it appears under. */
  tag: string;
  /** Why the operation fails, by error code: each becomes an error response of the code's status. */
  errors?: Reasons;
  /** No API key needed (health checks, the version, this document). */
  public?: boolean;
};

/**
 * Defines a route: its request and response schemas, and its error responses built from
 * the error codes. Authenticated operations (every /v1 one but the public) also fail with
 * 401 and 503, since the key is checked in the database.
 */
export function contractRoute<const S extends ContractRouteSpec>({ tag, errors, public: open, ...spec }: S) {
  const reasons = open ? (errors ?? {}) : { ...AUTHENTICATED, ...errors };
  return createRoute({
    ...spec,
    tags: [tag],
    ...(open ? { security: [] } : {}),
    responses: { ...spec.responses, ...errorResponses(reasons) },
  }) as Omit<S, "tag" | "errors" | "public"> & { getRoutingPath(): string };
}

/** Any contract route; each one's own type keeps its literal responses, which type its handler. */
export type ContractRoute = RouteConfig & { getRoutingPath(): string };

/** A JSON response of a named schema. */
export const jsonContent = <T>(schema: T) => ({ "application/json": { schema } });

/** The one success response of most operations: 200 with a JSON body. */
export const ok = <T>(description: string, schema: T) => ({ 200: { description, content: jsonContent(schema) } });
