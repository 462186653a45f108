import { z } from "zod";

/** What a usage record counts (docs/usage.md). */
export const USAGE_KINDS = ["completion", "chat", "embedding", "image"] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];

/**
 * How the request ended: `finished` (its answer complete), `cancelled` (the client left, or
 * asked to stop: what was produced until then counts), `failed` (an error cut it short).
 */
export const USAGE_OUTCOMES = ["finished", "cancelled", "failed"] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

const count = z.number().int().min(0);

/** Who a request's use is metered to: the account and the API key it came with. */
export const usageMeterTagSchema = z.object({
  accountId: z.string().min(1),
  keyId: z.string().min(1),
  /** The batch the request is a line of (docs/batch.md). */
  batchId: z.string().min(1).optional(),
});
export type UsageMeterTag = z.infer<typeof usageMeterTagSchema>;

/** One request's use, as the worker that ran it reports it. Times are epoch milliseconds. */
export const usageRecordSchema = z
  .object({
    requestId: z.string().min(1),
    accountId: z.string().min(1),
    keyId: z.string().min(1),
    batchId: z.string().min(1).optional(),
    model: z.string().min(1),
    baseModelId: z.string().min(1),
    adapter: z.string().min(1).optional(),
    kind: z.enum(USAGE_KINDS),
    promptTokens: count,
    cachedTokens: count,
    completionTokens: count,
    images: count,
    imageSteps: count,
    imagePixels: count,
    startedAt: z.number().int(),
    endedAt: z.number().int(),
    outcome: z.enum(USAGE_OUTCOMES),
  })
  .refine((r) => r.cachedTokens <= r.promptTokens, { message: "more cached tokens than prompt tokens" })
  .refine((r) => r.endedAt >= r.startedAt, { message: "ended before it started" });
export type UsageRecord = z.infer<typeof usageRecordSchema>;
