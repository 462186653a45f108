import { randomUUID } from "node:crypto";
import type { Hono } from "hono";
import { AppError } from "../../errors.js";
import { clientGone, type AppDeps, type AppEnv } from "../app-env.js";
import { chatCompletionsRoute } from "../contract/openai/routes.js";
import type { ChatCompletion } from "../contract/openai/responses.js";
import { mountRoute } from "../mount-route.js";
import { REQUEST_ID_HEADER } from "../request-id.js";
import type { ChatMeta } from "./chat-chunks.js";
import { toMessages, toToolUse } from "./chat-messages.js";
import { collect, unixNow, usageBody, type CollectedCall } from "./collect.js";
import { chatLogprobs, chatTopLogprobs } from "./logprobs.js";
import { checkMaxTokens, refuseTypicalUnderGrammar, toSampling } from "./sampling.js";
import { chatEstimate } from "./token-estimate.js";
import { admitGeneration } from "../admit-generation.js";
import { sseResponse } from "./sse.js";
import { chunksOf, type StreamView } from "./stream-view.js";

export function chatCompletionsRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  mountRoute(app, chatCompletionsRoute, async (c, { body: req }) => {
    const resolved = await deps.models.forInference(c.get("caller").accountId, req.model);
    const model = resolved.target;
    const n = req.n ?? 1;
    const maxTokens = req.max_completion_tokens ?? req.max_tokens ?? null;
    const param = req.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens";
    checkMaxTokens(maxTokens, param, req.model, resolved, deps.config.worker.contextSize);
    const sampling = toSampling(req, maxTokens);
    const logprobs = chatTopLogprobs(req);
    await deps.management.catalog.templates.beforeChat(model.chatTemplate);
    const abort = clientGone(c.req.raw);
    const requestId = randomUUID();
    c.header(REQUEST_ID_HEADER, requestId); // on errors too
    const meta: ChatMeta = { id: `chatcmpl-${requestId}`, created: unixNow(), model: req.model };
    const view: StreamView | undefined = req.stream
      ? { endpoint: "chat", chunk: meta, includeUsage: req.stream_options?.include_usage === true }
      : undefined;
    const messages = toMessages(req.messages);
    const tools = toToolUse(req);
    if (tools) {
      refuseBesideTools(sampling.constraint !== undefined, logprobs !== undefined);
      refuseTypicalUnderGrammar(req.typical_p, "tools");
    }
    const context = Math.min(deps.config.worker.contextSize, resolved.contextLength ?? deps.config.worker.contextSize);
    const ticket = await admitGeneration(c, deps, {
      requestId,
      model: req.model,
      estimatedTokens: chatEstimate(messages, n, maxTokens ?? context),
    });
    const events = ticket.track(
      deps.inference.run(
        {
          kind: "chat",
          model,
          messages,
          ...(tools ? { tools } : {}),
          n,
          sampling,
          streamed: view !== undefined,
          ...(logprobs === undefined ? {} : { logprobs }),
        },
        abort.signal,
        { requestId, resumable: view && { accountId: c.get("caller").accountId, view }, ...ticket.queueing },
      ),
    );

    if (view) return sseResponse(events, chunksOf(view), () => abort.abort(), { requestId });
    const result = await collect(events, n);
    const reply: ChatCompletion = {
      ...meta,
      object: "chat.completion",
      choices: result.texts.map((content, index) => ({
        index,
        message: assistantMessage(content, result.toolCalls[index] ?? []),
        logprobs: logprobs === undefined ? null : chatLogprobs(result.logprobs[index] ?? []),
        finish_reason: result.finishReasons[index] ?? "stop",
      })),
      usage: usageBody(result.usage),
    };
    return c.json(reply, 200);
  });
}

/** The answer's message: with tool calls, its content is the text before them, or null if there is none. */
function assistantMessage(content: string, calls: CollectedCall[]): ChatCompletion["choices"][number]["message"] {
  if (calls.length === 0) return { role: "assistant", content };
  return {
    role: "assistant",
    content: content === "" ? null : content,
    tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
  };
}

/**
 * Tools take the whole answer's grammar, and their calls' tokens have no place in the text's
 * logprobs: neither response_format nor logprobs goes with them (tool_choice "none" may).
 */
function refuseBesideTools(constrained: boolean, logprobs: boolean): void {
  const param = constrained ? "response_format" : logprobs ? "logprobs" : undefined;
  if (param) {
    throw new AppError("invalid_request", `${param} cannot be combined with tools, unless tool_choice is "none".`, {
      param,
    });
  }
}
