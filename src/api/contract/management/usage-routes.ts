import { z } from "@hono/zod-openapi";
import { contractRoute, ok } from "../route.js";
import { accountParams } from "./params.js";

/** An account's usage, summed over a period (docs/usage.md). */

const tag = "Usage";

export const USAGE_GROUPINGS = ["model", "key", "day", "day_model"] as const;

export const usageQuery = z.object({
  start: z.iso.datetime({ offset: true }).optional().openapi({
    description: "The period's start (RFC 3339), included; default 30 days before `end`.",
  }),
  end: z.iso.datetime({ offset: true }).optional().openapi({
    description: "The period's end (RFC 3339), excluded; default now.",
  }),
  groupBy: z
    .enum(USAGE_GROUPINGS)
    .default("model")
    .openapi({
      description:
        "Sum by `model` (the name asked for), `key` (the API key's ID), `day` (UTC), or `day_model` (each day's " +
        "models apart, the account page's chart). Default model.",
    }),
  group_by: z.enum(USAGE_GROUPINGS).optional().openapi({
    description: "The same as groupBy, spelled as OpenAI's parameters are; it wins when both are given.",
  }),
});

const count = z.number().int().min(0);
const totals = {
  requests: count.openapi({ description: "Requests that ended in the period." }),
  promptTokens: count,
  cachedTokens: count.openapi({ description: "Of the prompt tokens, those whose KV cells an earlier request left." }),
  completionTokens: count,
  images: count,
  imageSteps: count.openapi({ description: "Each image's steps, summed." }),
  imagePixels: count.openapi({ description: "Each image's width × height, summed." }),
  cost: z.number().min(0).optional().openapi({
    description: "What it cost at the operator's prices (HEARTH_PRICES), in `currency`; absent without prices.",
  }),
};

export const usageTotalsSchema = z.strictObject(totals).openapi("UsageTotals");

export const usageReportSchema = z
  .strictObject({
    accountId: z.string(),
    startTime: z.iso.datetime(),
    endTime: z.iso.datetime(),
    groupBy: z.enum(USAGE_GROUPINGS),
    currency: z.string().nullable().openapi({ description: "The prices' currency (ISO 4217); null: no prices set." }),
    groups: z.array(
      z.strictObject({
        group: z.string().openapi({
          description: "The model's name, the key's ID, the day (YYYY-MM-DD), or by day_model `<day>/<model>`.",
        }),
        day: z.string().optional().openapi({ description: "By day_model: the day (YYYY-MM-DD, UTC)." }),
        model: z.string().optional().openapi({ description: "By day_model: the model's name." }),
        ...totals,
      }),
    ),
    total: usageTotalsSchema,
    deployments: z
      .array(
        z.strictObject({
          model: z.string(),
          deployedHours: z.number().min(0).openapi({
            description:
              "Hours it was DEPLOYED within the period: from each deploy's end to the next undeploy's start.",
          }),
          cost: totals.cost,
        }),
      )
      .openapi({ description: "The account's models deployed at some time in the period." }),
    cost: z.number().min(0).optional().openapi({
      description: "With prices: the total's cost and the deployed hours' together, in `currency`.",
    }),
  })
  .openapi("UsageReport");
export type UsageReport = z.infer<typeof usageReportSchema>;

/** Why reading usage fails, the report and the export alike (services/usage-reports.ts). */
const USAGE_ERRORS = {
  invalid_request: "start or end is not an RFC 3339 time, or end is not after start (`param` names it).",
  forbidden: "The key has neither the models nor the admin scope.",
  not_found: "account_id is not the key's own account (or, for an admin key, no account).",
};

export const getUsageRoute = contractRoute({
  method: "get",
  path: "/v1/accounts/{account_id}/usage",
  operationId: "getUsage",
  scope: "any",
  summary: "An account's usage over a period",
  description:
    "What the account's requests used, from the usage records (docs/usage.md): its own account with a key of " +
    "scope models or admin; any account with an admin key. Totals match the records to the token.",
  tag,
  request: { params: accountParams, query: usageQuery },
  responses: ok("The usage, by group, and its total.", usageReportSchema),
  errors: USAGE_ERRORS,
});

export const usageRecordsQuery = usageQuery.omit({ groupBy: true, group_by: true });

export const exportUsageRoute = contractRoute({
  method: "get",
  path: "/v1/accounts/{account_id}/usage/records",
  operationId: "exportUsage",
  scope: "any",
  summary: "Export an account's usage records",
  description:
    "Every usage record of the requests that ended in [start, end), oldest first, as JSON lines (one record a " +
    "line, the fields of docs/usage.md in camelCase, times in RFC 3339), streamed, for billing systems. Who may " +
    "read them as for the usage report.",
  tag,
  request: { params: accountParams, query: usageRecordsQuery },
  responses: {
    200: {
      description: "`application/x-ndjson`: one usage record a line.",
      content: {
        "application/x-ndjson": {
          schema: z.string().openapi({ description: "Lines of JSON usage records." }),
        },
      },
    },
  },
  errors: USAGE_ERRORS,
});
