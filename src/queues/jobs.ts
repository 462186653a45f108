import { z } from "zod";
import type { JobsOptions } from "bullmq";

/**
 * The one job registry. Each job kind names its queue, its payload schema and its
 * options; producers (the API) and consumers (workers) import the same entry, and
 * a worker must provide a handler for every kind it consumes (see workers/handlers.ts).
 */

export const samplingSchema = z.object({
  /** Tokens to generate; null means "until the context is full". */
  maxTokens: z.number().int().positive().nullable(),
  temperature: z.number().min(0).max(2),
  topP: z.number().gt(0).max(1).optional(),
  topK: z.number().int().min(0).optional(),
  seed: z.number().int().optional(),
  stop: z.array(z.string().min(1)).max(4),
  presencePenalty: z.number().min(-2).max(2).optional(),
  frequencyPenalty: z.number().min(-2).max(2).optional(),
  repetitionPenalty: z.number().gt(0).max(10).optional(),
});
export type Sampling = z.infer<typeof samplingSchema>;

export const chatMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

/** What a worker needs to know about the model a request names. */
export const modelTargetSchema = z.object({
  /** The public name, accounts/<account>/models/<model>. */
  name: z.string(),
  /** The base model's ID under the built-in account; it selects the queue. */
  baseModelId: z.string(),
});
export type ModelTarget = z.infer<typeof modelTargetSchema>;

const requestBase = {
  /** Identifies the request on the reply channel. */
  requestId: z.string().min(1),
  /** The reply channel of the API instance that waits for the answer. */
  replyTo: z.string().min(1),
  model: modelTargetSchema,
};

export const inferencePayloadSchema = z.discriminatedUnion("kind", [
  z.object({
    ...requestBase,
    kind: z.literal("completion"),
    /** One entry per prompt; each yields `n` choices. */
    prompts: z.array(z.string()).min(1),
    n: z.number().int().min(1).max(8),
    sampling: samplingSchema,
  }),
  z.object({
    ...requestBase,
    kind: z.literal("chat"),
    messages: z.array(chatMessageSchema).min(1),
    n: z.number().int().min(1).max(8),
    sampling: samplingSchema,
  }),
  z.object({
    ...requestBase,
    kind: z.literal("embedding"),
    inputs: z.array(z.string()).min(1),
  }),
]);
export type InferencePayload = z.infer<typeof inferencePayloadSchema>;

interface JobDefinition<S extends z.ZodType> {
  /** The BullMQ queue name for this job (some kinds have one queue per base model). */
  queueName: (...args: never[]) => string;
  payload: S;
  options: JobsOptions;
}

export const jobs = {
  inference: {
    // BullMQ forbids ':' in queue names; base model IDs are [a-z0-9-].
    queueName: (baseModelId: string) => `inference-${baseModelId}`,
    payload: inferencePayloadSchema,
    // A retry would send tokens twice: inference runs once.
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 1000, age: 3600 } },
  },
} as const satisfies Record<string, JobDefinition<z.ZodType>>;

export type JobName = keyof typeof jobs;
export type JobPayload<N extends JobName> = z.infer<(typeof jobs)[N]["payload"]>;
