import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { ApiKeyScope } from "../../domain/vocabulary.js";
import { AUTHENTICATED, errorResponses, type Reasons } from "./errors.js";

/** What an operation needs of the caller's key: one scope, or any valid key (reads of one's own account). */
export type RouteScope = ApiKeyScope | "any";

type RouteBase = Omit<RouteConfig, "tags" | "security"> & {
  /** The tag (section) of the document it appears under. */
  tag: string;
  /** Why the operation fails, by error code: each becomes an error response of the code's status. */
  errors?: Reasons;
};

/** A route of Hearth's HTTP API: createRoute's config plus the conventions every operation shares. */
export type ContractRouteSpec = RouteBase &
  (
    | {
        /** No API key needed (health checks, the version, this document). */
        public: true;
        scope?: never;
      }
    | {
        public?: false;
        /** The key's scope it needs (docs/security.md); mountRoute enforces it, the document shows it. */
        scope: RouteScope;
      }
  );

/**
 * Defines a route: its request and response schemas, and its error responses built from
 * the error codes. Authenticated operations (every /v1 one but the public) also fail with
 * 401 and 503, since the key is checked in the database, and with 403 when the key lacks the
 * operation's scope.
 */
export function contractRoute<const S extends ContractRouteSpec>({ tag, errors, public: open, scope, ...spec }: S) {
  const reasons = open ? (errors ?? {}) : { ...AUTHENTICATED, ...withScope(errors ?? {}, scope!) };
  const route = createRoute({
    ...spec,
    tags: [tag],
    security: open ? [] : [{ apiKey: scope === "any" ? [] : [scope!] }],
    responses: { ...spec.responses, ...errorResponses(reasons) },
  }) as Omit<S, "tag" | "errors" | "public" | "scope"> & { getRoutingPath(): string };
  // Not enumerable: the document is built from the route's own fields, and this is Hearth's.
  return Object.defineProperty(route, "scope", {
    value: open ? "public" : scope!,
    enumerable: false,
  }) as typeof route & {
    readonly scope: RouteScope | "public";
  };
}

/** An operation's failure reasons with the 403 of a key that lacks its scope. */
function withScope(errors: Reasons, scope: RouteScope): Reasons {
  if (scope === "any") return errors;
  const lacking = `The key lacks the \`${scope}\` scope.`;
  return { ...errors, forbidden: errors.forbidden ? `${lacking} ${errors.forbidden}` : lacking };
}

/** Any contract route; each one's own type keeps its literal responses, which type its handler. */
export type ContractRoute = RouteConfig & { getRoutingPath(): string; scope: RouteScope | "public" };

/** A JSON response of a named schema. */
export const jsonContent = <T>(schema: T) => ({ "application/json": { schema } });

/** The one success response of most operations: 200 with a JSON body. */
export const ok = <T>(description: string, schema: T) => ({ 200: { description, content: jsonContent(schema) } });
