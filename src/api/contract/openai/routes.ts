import { z } from "@hono/zod-openapi";
import { JSON_BODY_LIMIT, type Reasons } from "../errors.js";
import { ORPHAN_GRACE_MS } from "../../../domain/streams.js";
import { contractRoute, jsonContent, ok } from "../route.js";
import { chatRequestSchema, completionRequestSchema, embeddingRequestSchema } from "./requests.js";
import {
  chatCompletionChunkSchema,
  chatCompletionSchema,
  completionChunkSchema,
  completionSchema,
  embeddingListSchema,
  modelListSchema,
  modelObjectSchema,
} from "./responses.js";

/** The OpenAI-compatible endpoints. */

const tag = "OpenAI";

/** How generation requests fail, besides the key and the body size. */
const INFERENCE_ERRORS = {
  invalid_request:
    "A field is missing or invalid (`param` names it, e.g. `messages[0].role`); the body is not a JSON object; " +
    "a token ID (in the prompt, input or logit_bias) is outside the model's vocabulary.",
  context_length_exceeded:
    "The prompt and max_tokens do not fit the model's context (`param`: prompt or max_tokens); with " +
    '`context_length_exceeded_behavior: "truncate"` the prompt is cut to fit instead, where it can be.',
  not_found:
    'The model does not exist or the key may not use it, or it is an adapter that is not DEPLOYED (`param: "model"`).',
  ...JSON_BODY_LIMIT,
  rate_limited: "More than `HEARTH_MAX_QUEUE_DEPTH` requests already wait for this base model; retry shortly.",
  unavailable:
    "No worker took the request within `HEARTH_QUEUE_TIMEOUT_MS`, the worker went away, the server is shutting down, " +
    "or Redis or the database is down.",
  model_error:
    "Under a grammar (`response_format`, tools), llama.cpp refused a token it had sampled, and the generation " +
    "stopped; the request was valid, and a retry may succeed.",
} satisfies Reasons;

/** The request's ID, in every generation answer. */
const requestIdHeader = {
  "x-request-id": {
    description: "The request's ID. A stream that was cut off is resumed with `GET /v1/streams/{request_id}`.",
    schema: { type: "string" as const, format: "uuid" },
  },
};

/** The server-sent events of a streamed completion, as first sent or resumed. */
function eventStream(chunk: string) {
  return z.string().openapi({
    description:
      `Server-sent events: one \`data: <${chunk} JSON>\` line (and a blank line) per chunk, then \`data: [DONE]\`. ` +
      "Each choice ends with a chunk whose finish_reason is set; the last of those also carries usage. " +
      "The last chunk of each step carries an `id:` line, the event ID to resume after. " +
      "An error after the stream has begun arrives as `data: <Error JSON>`, then `data: [DONE]`. " +
      `Closing the connection cancels the generation unless the stream is resumed within ${ORPHAN_GRACE_MS} ms.`,
    examples: [`id: 1\ndata: {"id":"…","object":"…","choices":[…]}\n\ndata: [DONE]\n\n`],
  });
}

/** A JSON answer, or with `"stream": true` server-sent events of its chunks. */
function generation(answer: z.ZodType, names: { answer: string; chunk: string }) {
  return {
    200: {
      description:
        `The answer: \`application/json\` (${names.answer}), or with \`"stream": true\` \`text/event-stream\` of ` +
        `${names.chunk} events. An error before the first token is an ordinary error response with its status.`,
      headers: requestIdHeader,
      content: { ...jsonContent(answer), "text/event-stream": { schema: eventStream(names.chunk) } },
    },
  };
}

export const completionsRoute = contractRoute({
  method: "post",
  path: "/v1/completions",
  operationId: "createCompletion",
  scope: "inference",
  summary: "Complete prompts",
  tag,
  request: { body: { required: true, content: jsonContent(completionRequestSchema) } },
  responses: generation(completionSchema, { answer: "Completion", chunk: "CompletionChunk" }),
  errors: {
    ...INFERENCE_ERRORS,
    invalid_request: `${INFERENCE_ERRORS.invalid_request} More than 64 choices (prompts × n) is a 400 with param n.`,
  },
});

export const chatCompletionsRoute = contractRoute({
  method: "post",
  path: "/v1/chat/completions",
  operationId: "createChatCompletion",
  scope: "inference",
  summary: "Answer a conversation",
  description:
    "The prompt is an adapter's own chat template (its conversationConfig) if it has one, else the base model's " +
    "(the GGUF's tokenizer.chat_template), else Hearth's default (`System:`/`User:`/`Assistant:` lines). " +
    "An adapter template that fails on the messages is a 400 with param messages.",
  tag,
  request: { body: { required: true, content: jsonContent(chatRequestSchema) } },
  responses: generation(chatCompletionSchema, {
    answer: "ChatCompletion",
    chunk: "ChatCompletionChunk",
  }),
  errors: INFERENCE_ERRORS,
});

export const embeddingsRoute = contractRoute({
  method: "post",
  path: "/v1/embeddings",
  operationId: "createEmbedding",
  scope: "inference",
  summary: "Embed texts",
  description: "Mean-pooled, unit-length vectors; all inputs go to one worker as one job.",
  tag,
  request: { body: { required: true, content: jsonContent(embeddingRequestSchema) } },
  responses: ok("The embeddings, in input order.", embeddingListSchema),
  errors: {
    ...INFERENCE_ERRORS,
    invalid_request: `${INFERENCE_ERRORS.invalid_request} dimensions larger than the model's embedding length.`,
    context_length_exceeded: "An input has more tokens than the model embeds at once (`param: input`).",
  },
});

export const resumeStreamRoute = contractRoute({
  method: "get",
  path: "/v1/streams/{request_id}",
  operationId: "resumeStream",
  scope: "inference",
  summary: "Resume a streamed completion",
  description:
    "Resumes a streamed completion or chat completion whose connection was lost, on any API process: the events " +
    "after `Last-Event-ID` (all of them without it), then the live rest, with no gap and no repeat, rendered as the " +
    "first response rendered them. A stream's events are kept `HEARTH_STREAM_RETENTION_MS` after its last one. " +
    `A stream nobody reads for ${ORPHAN_GRACE_MS} ms is stopped; resuming it then gives what was sent and an error.`,
  tag,
  request: {
    params: z.object({
      request_id: z
        .string()
        .openapi({ param: { name: "request_id", in: "path", description: "The stream's `x-request-id`." } }),
    }),
    headers: z.object({
      "last-event-id": z
        .string()
        .regex(/^\d+$/)
        .optional()
        .openapi({ description: "The `id:` of the last event received; the stream goes on after it." }),
    }),
  },
  responses: {
    200: {
      description: "`text/event-stream` of the stream's chunks (CompletionChunk or ChatCompletionChunk).",
      headers: requestIdHeader,
      content: { "text/event-stream": { schema: eventStream("CompletionChunk or ChatCompletionChunk") } },
    },
  },
  errors: {
    invalid_request: "`Last-Event-ID` is not an event ID (a whole number).",
    not_found: "No stream has that ID for the key's account, or its events expired.",
    unavailable: INFERENCE_ERRORS.unavailable,
  },
});

export const modelsRoute = contractRoute({
  method: "get",
  path: "/v1/models",
  operationId: "listModels",
  scope: "any",
  summary: "List the models the key can query now",
  description: "The public READY base models and the caller's DEPLOYED adapters (with `parent`, their base model).",
  tag,
  responses: ok("The models.", modelListSchema),
});

const modelNotServable: Reasons = {
  not_found: "No model of that name can be queried now: missing, not deployed, or another account's.",
};

export const retrieveModelRoute = contractRoute({
  method: "get",
  path: "/v1/models/{model}",
  operationId: "retrieveModel",
  scope: "any",
  summary: "Get a model the key can query now",
  description:
    "`model` is the model's name, URL-encoded (`accounts%2Fhearth%2Fmodels%2Fhearth-tiny`, as the SDKs send it); " +
    "`GET /v1/models/accounts/{account_id}/models/{model_id}` is the same with the name as it is.",
  tag,
  request: { params: z.object({ model: z.string() }) },
  responses: ok("The model.", modelObjectSchema),
  errors: modelNotServable,
});

export const retrieveModelByPathRoute = contractRoute({
  method: "get",
  path: "/v1/models/accounts/{account_id}/models/{model_id}",
  operationId: "retrieveModelByPath",
  scope: "any",
  summary: "Get a model the key can query now, its name as a path",
  tag,
  request: { params: z.object({ account_id: z.string(), model_id: z.string() }) },
  responses: ok("The model.", modelObjectSchema),
  errors: modelNotServable,
});

/** The SSE chunks: no operation names their schemas (the stream descriptions do), so the document lists them itself. */
export { chatCompletionChunkSchema, completionChunkSchema };
