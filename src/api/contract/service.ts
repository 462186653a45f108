import { z } from "@hono/zod-openapi";
import { contractRoute, jsonContent, ok } from "./route.js";

/** Health checks, the version and the OpenAPI document: public, no key. */

const tag = "Service";

export const healthSchema = z.object({ status: z.literal("ok") }).openapi("Health");

export const readinessSchema = z
  .object({
    status: z.enum(["ready", "not ready"]),
    database: z.enum(["ok", "down"]).openapi({ description: "`ok` or `down` (why is in the API's log)." }),
    redis: z.enum(["ok", "down"]).openapi({ description: "`ok` or `down` (why is in the API's log)." }),
    workers: z.number().int().openapi({ description: "Workers alive (reporting their heartbeat)." }),
    backends: z.record(z.string(), z.number().int()).openapi({
      description:
        'Live workers with the text role by where their models compute (HEARTH_GPU): `{"cpu": 2}`, `{"cuda": 1}`.',
    }),
  })
  .openapi("Readiness");
export type Readiness = z.infer<typeof readinessSchema>;

export const versionSchema = z
  .strictObject({
    version: z.string().openapi({ description: "The server's version (its package.json), e.g. `0.1.0`." }),
    cli: z
      .strictObject({
        version: z.string(),
        url: z.string().openapi({ description: "Where to download it, relative to the server: `/v1/cli/hearth.tgz`." }),
        integrity: z.string().openapi({ description: "Its sha512, as npm writes integrity: `sha512-<base64>`." }),
        size: z.number().int().openapi({ description: "Its size in bytes." }),
      })
      .nullable()
      .openapi({
        description:
          "The `hearth` CLI this server offers `hearth upgrade` (an `npm pack` tarball), or null when it has none.",
      }),
  })
  .openapi("Version");
export type ServerVersion = z.infer<typeof versionSchema>;

export const healthRoute = contractRoute({
  method: "get",
  path: "/healthz",
  operationId: "getHealth",
  summary: "Liveness: the process answers",
  tag,
  public: true,
  responses: ok("The process is up.", healthSchema),
});

export const readinessRoute = contractRoute({
  method: "get",
  path: "/readyz",
  operationId: "getReadiness",
  summary: "Readiness: the database, Redis and at least one worker are up",
  tag,
  public: true,
  responses: {
    200: { description: "Ready.", content: jsonContent(readinessSchema) },
    503: { description: "Not ready; the fields say what is down.", content: jsonContent(readinessSchema) },
  },
});

export const versionRoute = contractRoute({
  method: "get",
  path: "/v1/version",
  operationId: "getVersion",
  summary: "The server's version",
  tag,
  public: true,
  responses: ok("The version of Hearth this server runs.", versionSchema),
});

export const cliTarballRoute = contractRoute({
  method: "get",
  path: "/v1/cli/hearth.tgz",
  operationId: "getCliTarball",
  summary: "The hearth CLI, as an npm pack tarball",
  description: "What `hearth upgrade` installs by default; check it against the integrity in `/v1/version`.",
  tag,
  public: true,
  responses: {
    200: {
      description: "The tarball.",
      content: { "application/gzip": { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
  errors: { unavailable: "This server has no CLI tarball to offer (its log says why)." },
});

const documentRoute = (path: string, operationId: string) =>
  contractRoute({
    method: "get",
    path,
    operationId,
    summary: "This OpenAPI description",
    tag,
    public: true,
    responses: { 200: { description: "The OpenAPI 3.1 document.", content: jsonContent(z.object({}).loose()) } },
  });

export const documentRoutes = [
  documentRoute("/openapi.json", "getOpenApiDocument"),
  documentRoute("/v1/openapi.json", "getOpenApiDocumentV1"),
];
