import { z } from "@hono/zod-openapi";
import {
  DEFAULT_TOP_K,
  DEFAULT_TOP_P,
  MAX_LOGIT_BIAS,
  MAX_SEED,
  MAX_STOP_CHARS,
  MAX_STOP_SEQUENCES,
  MAX_TOKENS,
} from "../../../domain/sampling-limits.js";

/**
 * The OpenAI requests Hearth accepts. They are converted to Hearth's own job payloads at
 * the route and travel no further. Descriptions here are the document's.
 */

const NOT_SUPPORTED = "Not supported: only absent, null or false is accepted; anything else is a 400.";

const unsupported = (what: string) =>
  z
    .any()
    .refine((v) => v === undefined || v === null || v === false, { message: `${what} is not supported` })
    .optional()
    .openapi({ description: NOT_SUPPORTED });

const stopString = z
  .string()
  .max(MAX_STOP_CHARS, { message: `a stop string may have at most ${MAX_STOP_CHARS} characters` });

const stop = z
  .union([
    stopString,
    z.array(stopString).max(MAX_STOP_SEQUENCES, { message: `stop takes at most ${MAX_STOP_SEQUENCES} sequences` }),
  ])
  .nullish()
  .transform((v) => (v == null ? [] : typeof v === "string" ? [v] : v).filter((s) => s.length > 0))
  .openapi({
    description: `Up to 4 stop strings of at most ${MAX_STOP_CHARS} characters; the stop string is not part of the text. Default none.`,
  });

const model = z
  .string({ message: "model is required: a name like accounts/hearth/models/hearth-tiny" })
  .min(1)
  .openapi({ description: "The model name, `accounts/<account_id>/models/<model_id>` (GET /v1/models lists them)." });

const user = z.string().max(256).nullish().openapi({ description: "Accepted, recorded nowhere." });

const sampling = {
  model,
  temperature: z.number().min(0).max(2).nullish().openapi({ description: "0 is greedy and deterministic. Default 1." }),
  top_p: z
    .number()
    .gt(0)
    .max(1)
    .nullish()
    .openapi({ description: `Nucleus sampling; 1 is off. Default ${DEFAULT_TOP_P} (llama.cpp's).` }),
  top_k: z
    .number()
    .int()
    .min(0)
    .nullish()
    .openapi({
      description: `Sample among the k most likely tokens; 0 is off (it sorts the whole vocabulary at each token). Default ${DEFAULT_TOP_K} (llama.cpp's).`,
    }),
  min_p: z.number().min(0).max(1).nullish().openapi({
    description: "Leave out tokens less likely than min_p times the most likely token's probability. Default off.",
  }),
  typical_p: z.number().gt(0).max(1).nullish().openapi({
    description:
      "Locally typical sampling: only the tokens whose surprisal is nearest the entropy, as many as make up typical_p of the probability, may be chosen; applied after top_k, before top_p, min_p and temperature. 1 is off. Default off.",
  }),
  seed: z
    .number()
    .int()
    .min(0, { message: `seed must be between 0 and ${MAX_SEED}` })
    .max(MAX_SEED, { message: `seed must be between 0 and ${MAX_SEED}` })
    .nullish()
    .openapi({
      description: `Makes sampling reproducible; choice i uses seed + i (modulo 2^32). 0 to ${MAX_SEED}. Default random.`,
    }),
  n: z.number().int().min(1).max(8).nullish().openapi({ description: "Choices per prompt. Default 1." }),
  stop,
  stream: z
    .boolean()
    .nullish()
    .openapi({ description: "Answer with server-sent events (text/event-stream) instead of one JSON body." }),
  stream_options: z
    .object({ include_usage: z.boolean().nullish() })
    .nullish()
    .openapi({ description: "With `include_usage: true`, a last chunk with `choices: []` and `usage`." }),
  presence_penalty: z
    .number()
    .min(-2)
    .max(2)
    .nullish()
    .openapi({ description: "Over the generated tokens. Default 0." }),
  frequency_penalty: z
    .number()
    .min(-2)
    .max(2)
    .nullish()
    .openapi({ description: "Over the generated tokens. Default 0." }),
  repetition_penalty: z
    .number()
    .gt(0)
    .max(10)
    .nullish()
    .openapi({ description: "Multiplicative, as in Hugging Face and vLLM. Default 1." }),
  context_length_exceeded_behavior: z
    .enum(["error", "truncate"], { message: "context_length_exceeded_behavior must be error or truncate" })
    .nullish()
    .openapi({
      description:
        "A prompt that does not fit the context with max_tokens: `error` (default) is a 400 with code `context_length_exceeded`; `truncate` drops the prompt's beginning (keeping the model's BOS) until it fits, and usage counts the tokens read. With max_tokens null (chat's default), a prompt that fills the context keeps its last half.",
    }),
  user,
  logprobs: unsupported("logprobs"),
  logit_bias: z
    .record(
      z.string().regex(/^(0|[1-9][0-9]*)$/, { message: 'logit_bias keys are token IDs, such as "50256"' }),
      z.number().min(-100).max(100),
      { message: "logit_bias must map token IDs to biases from -100 to 100" },
    )
    .refine((biases) => Object.keys(biases).length <= MAX_LOGIT_BIAS, {
      message: `logit_bias takes at most ${MAX_LOGIT_BIAS} tokens`,
    })
    .nullish()
    .openapi({
      description:
        "Token ID (a string) → bias from -100 to 100, added to the token's logit before sampling; -100 bans the token, 100 all but forces it. IDs outside the model's vocabulary are a 400.",
    }),
  tools: unsupported("tools"),
  response_format: z
    .object({ type: z.literal("text", { message: "only response_format type 'text' is supported" }) })
    .nullish()
    .openapi({ description: 'Only `{"type": "text"}` is accepted.' }),
};

const maxTokens = z
  .number()
  .int()
  .min(1, { message: "max_tokens must be at least 1" })
  .max(MAX_TOKENS, { message: `max_tokens may be at most ${MAX_TOKENS}` })
  .nullish();

const PROMPT_SHAPES = "a string, an array of strings, an array of token IDs or an array of such arrays";
const MAX_PROMPTS = 64;
const MAX_INPUTS = 2048;

/** Token IDs, as OpenAI takes them in place of text; the worker checks them against the model's vocabulary. */
const tokenIds = z.array(z.number().int().min(0)).min(1).max(MAX_TOKENS);

/** Text or token IDs, one or a list, as OpenAI's prompt and input: always a list here. */
const textsOrTokens = (param: string, max: number) =>
  z
    .union([z.string(), z.array(z.string()).min(1).max(max), tokenIds, z.array(tokenIds).min(1).max(max)], {
      message: `${param} must be ${PROMPT_SHAPES} (at most ${max})`,
    })
    .transform((v): (string | number[])[] =>
      typeof v === "string" || typeof v[0] === "number" ? [v as string | number[]] : (v as (string | number[])[]),
    );

export const completionRequestSchema = z
  .object({
    ...sampling,
    prompt: textsOrTokens("prompt", MAX_PROMPTS).openapi({
      description:
        "One prompt or up to 64, each text or token IDs (a token ID outside the model's vocabulary is a 400); each yields n choices (at most 64 choices per request).",
    }),
    max_tokens: maxTokens.openapi({
      description: "Default 16. The prompt and max_tokens must fit the context, else a 400 with param max_tokens.",
    }),
    echo: unsupported("echo"),
    suffix: unsupported("suffix"),
    best_of: z
      .number()
      .int()
      .max(1, { message: "best_of is not supported" })
      .nullish()
      .openapi({ description: "Only 1 (or absent) is accepted." }),
  })
  .openapi("CompletionRequest");
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const messageContent = z.union([z.string(), z.array(textPart).min(1)], {
  message: "content must be a string or an array of text parts",
});

export const chatRequestSchema = z
  .object({
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
      .min(1, { message: "messages must hold at least one message" })
      .openapi({ description: "The conversation; `developer` is treated as `system`, text parts are joined." }),
    max_tokens: maxTokens.openapi({ description: "Default: until the context is full." }),
    max_completion_tokens: maxTokens.openapi({ description: "Takes precedence over max_tokens." }),
    top_logprobs: unsupported("top_logprobs"),
  })
  .openapi("ChatCompletionRequest");
export type ChatRequest = z.infer<typeof chatRequestSchema>;

export const embeddingRequestSchema = z
  .object({
    model,
    input: textsOrTokens("input", MAX_INPUTS).openapi({
      description:
        "One input or up to 2048, each text or token IDs (a token ID outside the model's vocabulary is a 400), embedded as one job.",
    }),
    encoding_format: z
      .enum(["float", "base64"])
      .nullish()
      .openapi({ description: "`base64`: the little-endian float32 bytes. Default `float`." }),
    dimensions: z.number().int().min(1).nullish().openapi({
      description: "Keep the first `dimensions` components, re-normalised; more than the model has is a 400.",
    }),
    user,
  })
  .openapi("EmbeddingRequest");
export type EmbeddingRequest = z.infer<typeof embeddingRequestSchema>;
