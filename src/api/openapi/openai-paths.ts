import { schemaRef, type JsonSchema } from "./json-schema.js";
import { JSON_BODY_LIMIT, json, jsonBody, jsonResponse, operation, type Reasons } from "./operation.js";

/** The OpenAI-compatible endpoints. */

const TAG = "OpenAI";

/** How generation requests fail, besides the key and the body size. */
const INFERENCE_ERRORS: Reasons = {
  invalid_request:
    "A field is missing or invalid (`param` names it, e.g. `messages[0].role`); the body is not a JSON object; " +
    "the prompt and max_tokens do not fit the model's context.",
  not_found:
    'The model does not exist or the key may not use it, or it is an adapter that is not DEPLOYED (`param: "model"`).',
  ...JSON_BODY_LIMIT,
  rate_limited: "More than `HEARTH_MAX_QUEUE_DEPTH` requests already wait for this base model; retry shortly.",
  unavailable:
    "No worker took the request within `HEARTH_QUEUE_TIMEOUT_MS`, the worker went away, the server is shutting down, " +
    "or Redis or the database is down.",
};

function eventStream(chunk: string): JsonSchema {
  return {
    schema: {
      type: "string",
      description:
        `Server-sent events: one \`data: <${chunk} JSON>\` line (and a blank line) per chunk, then \`data: [DONE]\`. ` +
        "Each choice ends with a chunk whose finish_reason is set; the last of those also carries usage. " +
        "An error after the stream has begun arrives as `data: <Error JSON>`, then `data: [DONE]`. " +
        "Closing the connection cancels the generation.",
      examples: [`data: {"id":"…","object":"…","choices":[…]}\n\ndata: [DONE]\n\n`],
    },
  };
}

function generation(answer: string, chunk: string): JsonSchema {
  return {
    description:
      `The answer: \`application/json\` (${answer}), or with \`"stream": true\` \`text/event-stream\` of ${chunk} events. ` +
      "An error before the first token is an ordinary error response with its status.",
    content: { ...json(schemaRef(answer)), "text/event-stream": eventStream(chunk) },
  };
}

export function openAiPaths(): Record<string, JsonSchema> {
  return {
    "/v1/completions": {
      post: operation({
        operationId: "createCompletion",
        summary: "Complete prompts",
        tag: TAG,
        requestBody: jsonBody(schemaRef("CompletionRequest")),
        responses: { "200": generation("Completion", "CompletionChunk") },
        errors: {
          ...INFERENCE_ERRORS,
          invalid_request: `${INFERENCE_ERRORS.invalid_request} More than 64 choices (prompts × n) is a 400 with param n.`,
        },
      }),
    },
    "/v1/chat/completions": {
      post: operation({
        operationId: "createChatCompletion",
        summary: "Answer a conversation",
        description:
          "The prompt is an adapter's own chat template (its conversationConfig) if it has one, else the base model's " +
          "(the GGUF's tokenizer.chat_template), else Hearth's default (`System:`/`User:`/`Assistant:` lines). " +
          "An adapter template that fails on the messages is a 400 with param messages.",
        tag: TAG,
        requestBody: jsonBody(schemaRef("ChatCompletionRequest")),
        responses: { "200": generation("ChatCompletion", "ChatCompletionChunk") },
        errors: INFERENCE_ERRORS,
      }),
    },
    "/v1/embeddings": {
      post: operation({
        operationId: "createEmbedding",
        summary: "Embed texts",
        description: "Mean-pooled, unit-length vectors; all inputs go to one worker as one job.",
        tag: TAG,
        requestBody: jsonBody(schemaRef("EmbeddingRequest")),
        responses: { "200": jsonResponse("The embeddings, in input order.", schemaRef("EmbeddingList")) },
        errors: {
          ...INFERENCE_ERRORS,
          invalid_request: `${INFERENCE_ERRORS.invalid_request} dimensions larger than the model's embedding length.`,
        },
      }),
    },
    "/v1/models": {
      get: operation({
        operationId: "listModels",
        summary: "List the models the key can query now",
        description:
          "The public READY base models and the caller's DEPLOYED adapters (with `parent`, their base model).",
        tag: TAG,
        responses: { "200": jsonResponse("The models.", schemaRef("ModelList")) },
      }),
    },
  };
}
