import { z } from "zod";
import type { JobsOptions } from "bullmq";
import { AppError } from "../errors.js";
import { imagePayloadFields } from "./image-job.js";
import { BUILTIN_ACCOUNT_ID, modelName } from "../domain/model-name.js";
import { chatMessageSchema, samplingSchema, textOrTokensSchema, toolUseSchema } from "../domain/generation.js";
import { MAX_TOP_LOGPROBS } from "../domain/logprobs.js";
import { usageMeterTagSchema } from "../domain/usage.js";

/**
 * The one job registry. Each job kind names its queue, its payload schema and its
 * options; producers (the API) and consumers (workers) import the same entry, and
 * a consumer must provide a handler for every kind it takes (job-handlers.ts; the
 * workers' in workers/worker.ts, the control worker's in control/control-worker.ts).
 */

/** What a worker needs to know about the model a request names. */
export const modelTargetSchema = z.object({
  /** The public name, accounts/<account>/models/<model>. */
  name: z.string(),
  /** The base model's ID under the built-in account; it selects the queue. */
  baseModelId: z.string(),
  /**
   * The LoRA adapter to apply, when the model is a deployed adapter: the storage key
   * of its GGUF (a content-hash path, so equal adapters share one loaded copy).
   */
  adapter: z.object({ key: z.string().min(1) }).optional(),
  /** The adapter's own chat template (its conversation config), used instead of the base model's. */
  chatTemplate: z.string().min(1).optional(),
});
export type ModelTarget = z.infer<typeof modelTargetSchema>;

/**
 * Embeddings come from base models only: llama.cpp's embedding contexts take no LoRA, and
 * the base model's vectors under an adapter's name would be a silent lie. The API checks
 * at admission; a worker checks again for any job that reaches it another way.
 */
export function checkEmbeddingTarget(target: ModelTarget): void {
  if (!target.adapter) return;
  throw new AppError(
    "invalid_request",
    `${target.name} is a LoRA adapter; Hearth computes embeddings with base models only (llama.cpp applies no LoRA ` +
      `to them). Ask its base model (${modelName(BUILTIN_ACCOUNT_ID, target.baseModelId)}) instead.`,
    { param: "model" },
  );
}

const requestBase = {
  /** Identifies the request on the reply channel. */
  requestId: z.string().min(1),
  /** The reply channel of the API instance that waits for the answer. */
  replyTo: z.string().min(1),
  /** Keep the request's events for resuming this long after the last one (stream.ts); absent or 0: not kept. */
  logTtlMs: z.number().int().min(0).optional(),
  model: modelTargetSchema,
  /** Whose use it is: the worker's usage record names them (docs/usage.md); absent, it is not metered. */
  meter: usageMeterTagSchema.optional(),
};

/** Token logprobs with this many alternatives per token (engine.ts's GenerateRequest.logprobs); absent: none. */
const logprobsField = z.number().int().min(0).max(MAX_TOP_LOGPROBS).optional();

export const inferencePayloadSchema = z.discriminatedUnion("kind", [
  z.object({
    ...requestBase,
    kind: z.literal("completion"),
    /** Sent through the express lane: the worker lets it take a sequence kept for such requests. */
    express: z.literal(true).optional(),
    /** false: the client reads the whole answer at once, so its tokens may go in fewer events (reply-publisher.ts); absent: streamed. */
    streamed: z.boolean().optional(),
    /** One entry per prompt (text or token IDs); each yields `n` choices. */
    prompts: z.array(textOrTokensSchema).min(1),
    n: z.number().int().min(1).max(8),
    sampling: samplingSchema,
    logprobs: logprobsField,
    /** Each choice's text starts with its prompt (with logprobs, the prompt's tokens too). */
    echo: z.literal(true).optional(),
  }),
  z.object({
    ...requestBase,
    kind: z.literal("chat"),
    /** Sent through the express lane: the worker lets it take a sequence kept for such requests. */
    express: z.literal(true).optional(),
    /** false: the client reads the whole answer at once, so its tokens may go in fewer events (reply-publisher.ts); absent: streamed. */
    streamed: z.boolean().optional(),
    messages: z.array(chatMessageSchema).min(1),
    /** The tools the model may call, rendered into its prompt; their calls are parsed from its answer. */
    tools: toolUseSchema.optional(),
    n: z.number().int().min(1).max(8),
    sampling: samplingSchema,
    logprobs: logprobsField,
  }),
  z.object({
    ...requestBase,
    kind: z.literal("embedding"),
    /** Texts or token IDs. */
    inputs: z.array(textOrTokensSchema).min(1),
  }),
]);
export type InferencePayload = z.infer<typeof inferencePayloadSchema>;

export const imagePayloadSchema = z.object({ ...requestBase, ...imagePayloadFields });
export type ImagePayload = z.infer<typeof imagePayloadSchema>;

/**
 * Which process consumes a kind: workers with the text role (`inference`: they hold the
 * language models) or the image role (`images`), or the `control` loop of the API processes
 * (they own the database, which with the embedded PGlite only one process may open).
 */
export type JobConsumer = "inference" | "images" | "control";

interface JobDefinition<S extends z.ZodType> {
  consumer: JobConsumer;
  /**
   * Runs at most once: a job whose worker died is failed, never re-run (BullMQ's stalled-job
   * check re-runs a job otherwise, whatever its `attempts`). For jobs that stream output.
   */
  runsOnce?: boolean;
  /** The BullMQ queue name for this job (some kinds have one queue per base model). */
  queueName: (...args: never[]) => string;
  /** The express lane's queue, for kinds that have one (fair scheduling, docs/security.md). */
  expressQueueName?: (...args: never[]) => string;
  payload: S;
  options: JobsOptions;
}

/** Deploy and undeploy name a model; the handlers read its state from the database. */
export const lifecyclePayloadSchema = z.object({
  accountId: z.string().min(1),
  modelId: z.string().min(1),
});
export type LifecyclePayload = z.infer<typeof lifecyclePayloadSchema>;

/** Both lifecycle kinds share one queue, so a model's deploy and undeploy run in the order asked. */
const LIFECYCLE_QUEUE = "{model-lifecycle}";
const lifecycleOptions = {
  attempts: 5,
  backoff: { type: "exponential", delay: 500 },
  removeOnComplete: { count: 1000, age: 24 * 3600 },
  removeOnFail: { count: 1000, age: 7 * 24 * 3600 },
} satisfies JobsOptions;

export const jobs = {
  inference: {
    consumer: "inference",
    runsOnce: true,
    // BullMQ forbids ':' in queue names; base model IDs are [a-z0-9-]. With a worker's ID it is
    // that worker's own queue of the model, where placement sends the adapters it has loaded.
    // The braces are a Redis Cluster hash tag: a model's queues (and its placement record) share a slot.
    queueName: (baseModelId: string, workerId?: string) =>
      workerId === undefined ? `inference-{${baseModelId}}` : `inference-{${baseModelId}}@${workerId}`,
    /** The model's express lane: requests of accounts with nothing else in flight, while the shared queue has a backlog. */
    expressQueueName: (baseModelId: string) => `inference-{${baseModelId}}!express`,
    payload: inferencePayloadSchema,
    // A retry would send tokens twice: inference runs once.
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 1000, age: 3600 } },
  },
  /** Generates images with an image model; like inference, it runs once and streams progress. */
  image: {
    consumer: "images",
    runsOnce: true,
    queueName: (imageModelId: string) => `images-{${imageModelId}}`,
    payload: imagePayloadSchema,
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 1000, age: 3600 } },
  },
  /** Converts the adapter if needed, marks it DEPLOYED and tells the workers of its base model. */
  deploy: {
    consumer: "control",
    queueName: () => LIFECYCLE_QUEUE,
    payload: lifecyclePayloadSchema,
    options: lifecycleOptions,
  },
  /** Marks the model undeployed and tells the workers to free its adapter. */
  undeploy: {
    consumer: "control",
    queueName: () => LIFECYCLE_QUEUE,
    payload: lifecyclePayloadSchema,
    options: lifecycleOptions,
  },
} as const satisfies Record<string, JobDefinition<z.ZodType>>;

export type JobName = keyof typeof jobs;
export type JobPayload<N extends JobName> = z.infer<(typeof jobs)[N]["payload"]>;
/** The kinds one consumer handles. */
export type JobsOf<C extends JobConsumer> = {
  [N in JobName]: (typeof jobs)[N]["consumer"] extends C ? N : never;
}[JobName];
