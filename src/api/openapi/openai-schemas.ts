import { MODEL_KINDS } from "../../db/schema/models.js";
import { chatRequestSchema, completionRequestSchema, embeddingRequestSchema } from "../openai/protocol.js";
import { fromZod, nullable, schemaRef, type JsonSchema } from "./json-schema.js";

/** Schemas of the OpenAI-compatible endpoints: requests from protocol.ts, answers as the routes shape them. */

const NOT_SUPPORTED = "Not supported: only absent, null or false is accepted; anything else is a 400.";

const SAMPLING: Record<string, string> = {
  model: "The model name, `accounts/<account_id>/models/<model_id>` (GET /v1/models lists them).",
  temperature: "0 is greedy and deterministic. Default 1.",
  top_p: "Nucleus sampling. Default off.",
  top_k: "Sample among the k most likely tokens. Default off.",
  seed: "Makes sampling reproducible; choice i uses seed + i. Default random.",
  n: "Choices per prompt. Default 1.",
  stop: "Up to 4 stop strings; the stop string is not part of the text. Default none.",
  stream: "Answer with server-sent events (text/event-stream) instead of one JSON body.",
  stream_options: "With `include_usage: true`, a last chunk with `choices: []` and `usage`.",
  presence_penalty: "Over the generated tokens. Default 0.",
  frequency_penalty: "Over the generated tokens. Default 0.",
  repetition_penalty: "Multiplicative, as in Hugging Face and vLLM. Default 1.",
  user: "Accepted, recorded nowhere.",
  logprobs: NOT_SUPPORTED,
  logit_bias: NOT_SUPPORTED,
  tools: NOT_SUPPORTED,
  response_format: 'Only `{"type": "text"}` is accepted.',
};

const usage = {
  type: "object",
  required: ["prompt_tokens", "completion_tokens", "total_tokens"],
  properties: {
    prompt_tokens: { type: "integer" },
    completion_tokens: { type: "integer" },
    total_tokens: { type: "integer" },
  },
};

const finishReason = { type: "string", enum: ["stop", "length"], description: "`length` when max_tokens ran out." };

const answerFields = (object: string) => ({
  id: { type: "string" },
  object: { const: object },
  created: { type: "integer", description: "Unix time in seconds." },
  model: { type: "string", description: "The model name of the request." },
});

function answer(object: string, choice: JsonSchema, options: { chunk: boolean }): JsonSchema {
  return {
    type: "object",
    required: ["id", "object", "created", "model", "choices", ...(options.chunk ? [] : ["usage"])],
    properties: {
      ...answerFields(object),
      choices: { type: "array", items: choice },
      usage: options.chunk
        ? {
            ...schemaRef("Usage"),
            description: "On the chunk that ends the last choice, and on the include_usage chunk.",
          }
        : schemaRef("Usage"),
    },
  };
}

const completionChoice = (chunk: boolean): JsonSchema => ({
  type: "object",
  required: ["text", "index", "logprobs", "finish_reason"],
  properties: {
    text: { type: "string" },
    index: { type: "integer", description: "Choice i of prompt p has index p·n + i." },
    logprobs: { type: "null" },
    finish_reason: chunk ? nullable(finishReason) : finishReason,
  },
});

const chatChoice: JsonSchema = {
  type: "object",
  required: ["index", "message", "logprobs", "finish_reason"],
  properties: {
    index: { type: "integer" },
    message: {
      type: "object",
      required: ["role", "content"],
      properties: { role: { const: "assistant" }, content: { type: "string" } },
    },
    logprobs: { type: "null" },
    finish_reason: finishReason,
  },
};

const chatChunkChoice: JsonSchema = {
  type: "object",
  required: ["index", "delta", "logprobs", "finish_reason"],
  properties: {
    index: { type: "integer" },
    delta: {
      type: "object",
      description: "The first delta of a choice carries `role`; the last one (with finish_reason) is empty.",
      properties: { role: { const: "assistant" }, content: { type: "string" } },
    },
    logprobs: { type: "null" },
    finish_reason: nullable(finishReason),
  },
};

export function openAiSchemas(): Record<string, JsonSchema> {
  return {
    CompletionRequest: fromZod(completionRequestSchema, {
      ...SAMPLING,
      prompt: "One prompt or up to 64; each yields n choices (at most 64 choices per request).",
      max_tokens: "Default 16. The prompt and max_tokens must fit the context, else a 400 with param max_tokens.",
      echo: NOT_SUPPORTED,
      suffix: NOT_SUPPORTED,
      best_of: "Only 1 (or absent) is accepted.",
    }),
    ChatCompletionRequest: fromZod(chatRequestSchema, {
      ...SAMPLING,
      messages: "The conversation; `developer` is treated as `system`, text parts are joined.",
      max_tokens: "Default: until the context is full.",
      max_completion_tokens: "Takes precedence over max_tokens.",
      top_logprobs: NOT_SUPPORTED,
    }),
    EmbeddingRequest: fromZod(embeddingRequestSchema, {
      model: SAMPLING.model!,
      input: "One text or up to 2048, embedded as one job.",
      encoding_format: "`base64`: the little-endian float32 bytes. Default `float`.",
      dimensions: "Keep the first `dimensions` components, re-normalised; more than the model has is a 400.",
      user: SAMPLING.user!,
    }),
    Usage: usage,
    Completion: answer("text_completion", completionChoice(false), { chunk: false }),
    CompletionChunk: answer("text_completion", completionChoice(true), { chunk: true }),
    ChatCompletion: answer("chat.completion", chatChoice, { chunk: false }),
    ChatCompletionChunk: answer("chat.completion.chunk", chatChunkChoice, { chunk: true }),
    EmbeddingList: {
      type: "object",
      required: ["object", "data", "model", "usage"],
      properties: {
        object: { const: "list" },
        data: {
          type: "array",
          items: {
            type: "object",
            required: ["object", "index", "embedding"],
            properties: {
              object: { const: "embedding" },
              index: { type: "integer" },
              embedding: {
                anyOf: [
                  { type: "array", items: { type: "number" }, description: "encoding_format float: a unit vector." },
                  {
                    type: "string",
                    contentEncoding: "base64",
                    description: "encoding_format base64: float32, little-endian.",
                  },
                ],
              },
            },
          },
        },
        model: { type: "string" },
        usage: {
          type: "object",
          required: ["prompt_tokens", "total_tokens"],
          properties: { prompt_tokens: { type: "integer" }, total_tokens: { type: "integer" } },
        },
      },
    },
    ModelList: {
      type: "object",
      required: ["object", "data"],
      properties: {
        object: { const: "list" },
        data: {
          type: "array",
          description: "The public READY base models and the caller's DEPLOYED adapters.",
          items: {
            type: "object",
            required: ["id", "object", "created", "owned_by", "kind", "parent", "context_length"],
            properties: {
              id: { type: "string", description: "The model name, accounts/<account_id>/models/<model_id>." },
              object: { const: "model" },
              created: { type: "integer", description: "Unix time in seconds." },
              owned_by: { type: "string", description: "The owning account ID." },
              kind: { type: "string", enum: [...MODEL_KINDS] },
              parent: { type: ["string", "null"], description: "An adapter's base model; null for a base model." },
              context_length: { type: ["integer", "null"] },
            },
          },
        },
      },
    },
  };
}
