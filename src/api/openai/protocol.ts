import { z } from "zod";

/**
 * OpenAI wire types for the requests Hearth accepts. They are converted to
 * Hearth's own job payloads at the route and travel no further.
 */

const unsupported = (what: string) =>
  z
    .any()
    .refine((v) => v === undefined || v === null || v === false, { message: `${what} is not supported` })
    .optional();

const stop = z
  .union([z.string(), z.array(z.string()).max(4, { message: "stop takes at most 4 sequences" })])
  .nullish()
  .transform((v) => (v == null ? [] : typeof v === "string" ? [v] : v).filter((s) => s.length > 0));

const sampling = {
  model: z.string({ message: "model is required: a name like accounts/hearth/models/hearth-tiny" }).min(1),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  seed: z.number().int().nullish(),
  n: z.number().int().min(1).max(8).nullish(),
  stop,
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  repetition_penalty: z.number().gt(0).max(10).nullish(),
  user: z.string().max(256).nullish(),
  logprobs: unsupported("logprobs"),
  logit_bias: unsupported("logit_bias"),
  tools: unsupported("tools"),
  response_format: z
    .object({ type: z.literal("text", { message: "only response_format type 'text' is supported" }) })
    .nullish(),
};

const maxTokens = z.number().int().min(1, { message: "max_tokens must be at least 1" }).nullish();

export const completionRequestSchema = z.object({
  ...sampling,
  prompt: z.union(
    [z.string(), z.array(z.string(), { message: "prompt must be a string or an array of strings" }).min(1).max(64)],
    { message: "prompt must be a string or an array of strings" },
  ),
  max_tokens: maxTokens,
  echo: unsupported("echo"),
  suffix: unsupported("suffix"),
  best_of: z.number().int().max(1, { message: "best_of is not supported" }).nullish(),
});
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const messageContent = z.union([z.string(), z.array(textPart).min(1)], {
  message: "content must be a string or an array of text parts",
});

export const chatRequestSchema = z.object({
  ...sampling,
  messages: z
    .array(
      z.object({
        role: z.enum(["system", "developer", "user", "assistant"], {
          message: "role must be one of system, developer, user, assistant",
        }),
        content: messageContent,
        name: z.string().nullish(),
      }),
      { message: "messages must be an array of messages" },
    )
    .min(1, { message: "messages must hold at least one message" }),
  max_tokens: maxTokens,
  max_completion_tokens: maxTokens,
  top_logprobs: unsupported("top_logprobs"),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;

export const embeddingRequestSchema = z.object({
  model: sampling.model,
  input: z.union(
    [z.string(), z.array(z.string(), { message: "input must be a string or an array of strings" }).min(1).max(2048)],
    { message: "input must be a string or an array of strings" },
  ),
  encoding_format: z.enum(["float", "base64"]).nullish(),
  dimensions: z.number().int().min(1).nullish(),
  user: z.string().max(256).nullish(),
});
export type EmbeddingRequest = z.infer<typeof embeddingRequestSchema>;

export interface UsageBody {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}
