import { z } from "@hono/zod-openapi";
import { MAX_COMPLETION_LOGPROBS, MAX_TOP_LOGPROBS } from "../../../domain/logprobs.js";
import {
  MAX_GRAMMAR_CHARS,
  MAX_LOGIT_BIAS,
  MAX_SEED,
  MAX_STOP_CHARS,
  MAX_STOP_SEQUENCES,
  MAX_TOKENS,
} from "../../../domain/sampling-limits.js";
import { chatMessage, tool, toolChoice } from "./chat-inputs.js";
import { withPolicy } from "./parameter-policy.js";

/**
 * The OpenAI requests Hearth accepts. They are converted to Hearth's own job payloads at
 * the route and travel no further. Descriptions here are the document's.
 */

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

const sampling = {
  model,
  temperature: z
    .number()
    .min(0)
    .max(2)
    .nullish()
    .openapi({ description: "0 is greedy and deterministic, as is anything below 1e-5. Default 1." }),
  top_p: z.number().gt(0).max(1).nullish().openapi({ description: "Nucleus sampling; 1 is off. Default off." }),
  top_k: z.number().int().min(0).nullish().openapi({
    description:
      "Sample among the k most likely tokens; 0 is off. Default off (the whole vocabulary: on a large one, a top_k such as 40 samples faster).",
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
  response_format: z
    .discriminatedUnion(
      "type",
      [
        z.object({ type: z.literal("text") }),
        z.object({ type: z.literal("json_object") }),
        z.object({
          type: z.literal("json_schema"),
          json_schema: z.object({
            name: z
              .string()
              .regex(/^[a-zA-Z0-9_-]{1,64}$/, { message: "name must be 1 to 64 letters, digits, _ or -" }),
            description: z.string().nullish(),
            schema: z.record(z.string(), z.unknown()).nullish(),
            strict: z.boolean().nullish(),
          }),
        }),
        z.object({
          type: z.literal("grammar"),
          grammar: z
            .string()
            .min(1)
            .max(MAX_GRAMMAR_CHARS, { message: `a grammar may have at most ${MAX_GRAMMAR_CHARS} characters` }),
        }),
      ],
      { message: "response_format type must be one of text, json_object, json_schema, grammar" },
    )
    .nullish()
    .openapi({
      description:
        "`text` (default); `json_object`: a JSON object; `json_schema`: a JSON value valid against " +
        "`json_schema.schema`, within the supported subset (docs/api.md; a keyword outside it is a 400 naming it; " +
        "`strict` is accepted, and the schema is always enforced); `grammar`: text in llama.cpp's GBNF, root rule " +
        "`root` (a grammar too ambiguous to run in bounded time is a 400). Enforced by a grammar while sampling; `stop` may not be combined with them.",
    }),
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

export const completionRequestSchema = withPolicy("completions", {
  ...sampling,
  prompt: textsOrTokens("prompt", MAX_PROMPTS).openapi({
    description:
      "One prompt or up to 64, each text or token IDs (a token ID outside the model's vocabulary is a 400); each yields n choices (at most 64 choices per request).",
  }),
  max_tokens: maxTokens.openapi({
    description: "Default 16. The prompt and max_tokens must fit the context, else a 400 with param max_tokens.",
  }),
  logprobs: z
    .number()
    .int()
    .min(0, { message: `logprobs must be between 0 and ${MAX_COMPLETION_LOGPROBS}` })
    .max(MAX_COMPLETION_LOGPROBS, { message: `logprobs must be between 0 and ${MAX_COMPLETION_LOGPROBS}` })
    .nullish()
    .openapi({
      description:
        `Report each token's log probability with the \`logprobs\` most likely tokens at its position (0 to ${MAX_COMPLETION_LOGPROBS}; ` +
        "the sampled token is always in `top_logprobs`, so up to logprobs + 1 entries). The probabilities are the model's " +
        "after temperature and penalties, before top_k, top_p and min_p (at temperature 0, at temperature 1): docs/api.md. Default none.",
    }),
  echo: z
    .boolean()
    .nullish()
    .openapi({
      description:
        "Each choice's text starts with its prompt as the model read it (token IDs as the model's text of them; with truncate, the part kept); " +
        "with `logprobs`, so do its tokens (the first prompt token's logprob is null). Default false.",
    }),
}).openapi("CompletionRequest");
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

export const chatRequestSchema = withPolicy("chat", {
  ...sampling,
  messages: z
    .array(chatMessage, { message: "messages must be an array of messages" })
    .min(1, { message: "messages must hold at least one message" })
    .openapi({
      description:
        "The conversation; `developer` is treated as `system`, text parts are joined. An assistant message may carry `tool_calls` (content then may be null); a `tool` message carries a call's result and the `tool_call_id` of an earlier call.",
    }),
  tools: z
    .array(tool, { message: "tools must be an array of {type: 'function', function: {...}}" })
    .min(1, { message: "tools must hold at least one tool" })
    .max(128, { message: "tools may hold at most 128 tools" })
    .nullish()
    .openapi({
      description:
        "Functions the model may call: name, description and parameters (a JSON schema of the arguments object), rendered through the model's chat template (docs/api.md, Tool calls).",
    }),
  tool_choice: toolChoice.nullish().openapi({
    description:
      "`auto` (default with tools): the model chooses text or calls; `required`: calls, from the answer's first token; a named function: a call of it; `none`: tools are not offered. With `required` or a name, calls are generated under a grammar of the functions' parameters.",
  }),
  parallel_tool_calls: z
    .boolean()
    .nullish()
    .openapi({ description: "Whether an answer may hold more than one call. Default true." }),
  max_tokens: maxTokens.openapi({ description: "Default: until the context is full." }),
  max_completion_tokens: maxTokens.openapi({ description: "Takes precedence over max_tokens." }),
  logprobs: z
    .boolean()
    .nullish()
    .openapi({
      description:
        "Report each generated token's log probability in `choices[].logprobs.content`: the model's probability after " +
        "temperature and penalties, before top_k, top_p and min_p (at temperature 0, at temperature 1): docs/api.md. Default false.",
    }),
  top_logprobs: z
    .number()
    .int()
    .min(0, { message: `top_logprobs must be between 0 and ${MAX_TOP_LOGPROBS}` })
    .max(MAX_TOP_LOGPROBS, { message: `top_logprobs must be between 0 and ${MAX_TOP_LOGPROBS}` })
    .nullish()
    .openapi({
      description: `The most likely tokens at each position, 0 to ${MAX_TOP_LOGPROBS}, with their log probabilities; needs \`logprobs: true\`. Default 0.`,
    }),
}).openapi("ChatCompletionRequest");
export type ChatRequest = z.infer<typeof chatRequestSchema>;

export const embeddingRequestSchema = withPolicy("embeddings", {
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
}).openapi("EmbeddingRequest");
export type EmbeddingRequest = z.infer<typeof embeddingRequestSchema>;
