import { z } from "@hono/zod-openapi";
import { MODEL_KINDS } from "../../../domain/vocabulary.js";

/** The answers of the OpenAI-compatible endpoints, as the routes shape them. */

export const usageSchema = z
  .object({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z.object({
      cached_tokens: z.number().int().openapi({
        description:
          "Of prompt_tokens, those the worker did not evaluate again: an earlier request on it began with them (prompt caching).",
      }),
    }),
  })
  .openapi("Usage");
export type UsageBody = z.infer<typeof usageSchema>;

const finishReason = z.enum(["stop", "length", "tool_calls"]).openapi({
  description: "`length` when max_tokens ran out; `tool_calls` (chat only) when the answer ended with tool calls.",
});
export type PublicFinishReason = z.infer<typeof finishReason>;

const answerFields = <O extends string>(object: O) => ({
  id: z.string(),
  object: z.literal(object),
  created: z.number().int().openapi({ description: "Unix time in seconds." }),
  model: z.string().openapi({ description: "The model name of the request." }),
});

const chunkUsage = usageSchema
  .optional()
  .openapi({ description: "On the chunk that ends the last choice, and on the include_usage chunk." });

/** An answer (or a chunk of one): the request's id and model, its choices and the usage. */
const answer = <O extends string, C extends z.ZodType, U extends z.ZodType>(object: O, choice: C, usage: U) =>
  z.object({ ...answerFields(object), choices: z.array(choice), usage });

const completionLogprobs = z
  .object({
    tokens: z.array(z.string()).openapi({ description: "The tokens; bytes that are not whole characters as `\\xNN`." }),
    token_logprobs: z
      .array(z.number().nullable())
      .openapi({ description: "Each token's log probability; null for the first token of an echoed prompt." }),
    top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).openapi({
      description: "Per token, the `logprobs` most likely tokens and the sampled one, token → log probability.",
    }),
    text_offset: z
      .array(z.number().int())
      .openapi({ description: "Where each token's text starts in `text`, in Unicode code points." }),
  })
  .nullable()
  .openapi({ description: "With `logprobs` in the request; else null." });
export type CompletionLogprobs = z.infer<typeof completionLogprobs>;

const completionChoice = z.object({
  text: z.string(),
  index: z.number().int().openapi({ description: "Choice i of prompt p has index p·n + i." }),
  logprobs: completionLogprobs,
  finish_reason: finishReason,
});

export const completionSchema = answer("text_completion", completionChoice, usageSchema).openapi("Completion");
export type Completion = z.infer<typeof completionSchema>;

export const completionChunkSchema = answer(
  "text_completion",
  completionChoice.extend({ finish_reason: finishReason.nullable() }),
  chunkUsage,
).openapi("CompletionChunk");
export type CompletionChunk = z.infer<typeof completionChunkSchema>;

const logprobToken = {
  token: z.string().openapi({ description: "The token's text; bytes that are not whole characters as `\\xNN`." }),
  logprob: z.number().openapi({ description: "-9999 when the probability is too small to have a logarithm." }),
  bytes: z.array(z.number().int()).nullable().openapi({ description: "The token's UTF-8 bytes." }),
};

const chatLogprobs = z
  .object({
    content: z.array(
      z.object({ ...logprobToken, top_logprobs: z.array(z.object(logprobToken)) }).openapi("ChatTokenLogprob"),
    ),
    refusal: z.null(),
  })
  .nullable()
  .openapi({ description: "With `logprobs: true` in the request; else null. On a chunk, that chunk's tokens." });
export type ChatLogprobs = z.infer<typeof chatLogprobs>;

const toolCall = z
  .object({
    id: z.string().openapi({ description: "`call_…`: what the tool message with its result names." }),
    type: z.literal("function"),
    function: z.object({
      name: z.string(),
      arguments: z.string().openapi({
        description:
          "The arguments object as JSON text; with tool_choice `required` or a named function, and once a call starts with `auto`, generated under a grammar of the function's parameters schema.",
      }),
    }),
  })
  .openapi("ChatToolCall");

const chatChoice = z.object({
  index: z.number().int(),
  message: z.object({
    role: z.literal("assistant"),
    content: z
      .string()
      .nullable()
      .openapi({ description: "null when the answer is tool calls alone; else the text (before any call)." }),
    tool_calls: z.array(toolCall).optional().openapi({ description: "Present when the model called tools." }),
  }),
  logprobs: chatLogprobs,
  finish_reason: finishReason,
});

export const chatCompletionSchema = answer("chat.completion", chatChoice, usageSchema).openapi("ChatCompletion");
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

const chatChunkChoice = z.object({
  index: z.number().int(),
  delta: z
    .object({
      role: z.literal("assistant").optional(),
      content: z.string().optional(),
      tool_calls: z
        .array(
          z.object({
            index: z.number().int().openapi({ description: "The call's place among the choice's calls, from 0." }),
            id: z.string().optional(),
            type: z.literal("function").optional(),
            function: z.object({ name: z.string().optional(), arguments: z.string() }),
          }),
        )
        .optional()
        .openapi({
          description:
            "A call's first delta has its id, type and function name (arguments empty); the next ones, fragments of its arguments to append.",
        }),
    })
    .openapi({
      description: "The first delta of a choice carries `role`; the last one (with finish_reason) is empty.",
    }),
  logprobs: chatLogprobs,
  finish_reason: finishReason.nullable(),
});

export const chatCompletionChunkSchema = answer("chat.completion.chunk", chatChunkChoice, chunkUsage).openapi(
  "ChatCompletionChunk",
);
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;

export const embeddingListSchema = z
  .object({
    object: z.literal("list"),
    data: z.array(
      z.object({
        object: z.literal("embedding"),
        index: z.number().int(),
        embedding: z.union([
          z.array(z.number()).openapi({ description: "encoding_format float: a unit vector." }),
          // JSON Schema 2020-12's contentEncoding, which the generator's (3.0-era) types do not list.
          z.string().openapi({
            contentEncoding: "base64",
            description: "encoding_format base64: float32, little-endian.",
          } as {
            description: string;
          }),
        ]),
      }),
    ),
    model: z.string(),
    usage: z.object({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
  })
  .openapi("EmbeddingList");
export type EmbeddingList = z.infer<typeof embeddingListSchema>;

export const modelObjectSchema = z
  .object({
    id: z.string().openapi({ description: "The model name, accounts/<account_id>/models/<model_id>." }),
    object: z.literal("model"),
    created: z.number().int().openapi({ description: "Unix time in seconds." }),
    owned_by: z.string().openapi({ description: "The owning account ID." }),
    kind: z.enum(MODEL_KINDS),
    parent: z.string().nullable().openapi({ description: "An adapter's base model; null for a base model." }),
    context_length: z.number().int().nullable(),
  })
  .openapi("OpenAIModel");
export type ModelObject = z.infer<typeof modelObjectSchema>;

export const modelListSchema = z
  .object({
    object: z.literal("list"),
    data: z
      .array(modelObjectSchema)
      .openapi({ description: "The public READY base models and the caller's DEPLOYED adapters." }),
  })
  .openapi("ModelList");
export type ModelList = z.infer<typeof modelListSchema>;
