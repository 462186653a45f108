import { randomUUID } from "node:crypto";
import type { Hono } from "hono";
import { AppError } from "../../errors.js";
import { clientGone, type AppDeps, type AppEnv } from "../app-env.js";
import { completionsRoute } from "../contract/openai/routes.js";
import type { Completion } from "../contract/openai/responses.js";
import { mountRoute } from "../mount-route.js";
import { collect, unixNow, usageBody } from "./collect.js";
import type { CompletionMeta } from "./completion-chunks.js";
import { REQUEST_ID_HEADER } from "../request-id.js";
import { completionLogprobs } from "./logprobs.js";
import { checkMaxTokens, toSampling } from "./sampling.js";
import { completionEstimate } from "./token-estimate.js";
import { admitGeneration } from "../admit-generation.js";
import { sseResponse } from "./sse.js";
import { chunksOf, type StreamView } from "./stream-view.js";

const DEFAULT_MAX_TOKENS = 16;
const MAX_CHOICES = 64;

export function completionsRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  mountRoute(app, completionsRoute, async (c, { body: req }) => {
    const resolved = await deps.models.forInference(c.get("caller").accountId, req.model);
    const model = resolved.target;
    const maxTokens = req.max_tokens ?? DEFAULT_MAX_TOKENS;
    checkMaxTokens(maxTokens, "max_tokens", req.model, resolved, deps.config.worker.contextSize);
    const sampling = toSampling(req, maxTokens);
    const prompts = req.prompt;
    const n = req.n ?? 1;
    if (prompts.length * n > MAX_CHOICES) {
      throw new AppError(
        "invalid_request",
        `${prompts.length} prompts × n=${n} asks for ${prompts.length * n} choices; at most ${MAX_CHOICES} per request.`,
        { param: "n" },
      );
    }
    const abort = clientGone(c.req.raw);
    const requestId = randomUUID();
    c.header(REQUEST_ID_HEADER, requestId); // on errors too
    const meta: CompletionMeta = {
      id: `cmpl-${requestId}`,
      object: "text_completion",
      created: unixNow(),
      model: req.model,
    };
    const view: StreamView | undefined = req.stream
      ? { endpoint: "completion", chunk: meta, includeUsage: req.stream_options?.include_usage === true }
      : undefined;
    const ticket = await admitGeneration(c, deps, {
      requestId,
      model: req.model,
      estimatedTokens: completionEstimate(prompts, n, maxTokens),
    });
    const events = ticket.track(
      deps.inference.run(
        {
          kind: "completion",
          model,
          prompts,
          n,
          sampling,
          streamed: view !== undefined,
          ...(req.logprobs == null ? {} : { logprobs: req.logprobs }),
          ...(req.echo ? { echo: true as const } : {}),
        },
        abort.signal,
        {
          requestId,
          resumable: view && { accountId: c.get("caller").accountId, view },
          ...ticket.queueing,
        },
      ),
    );

    if (view) return sseResponse(events, chunksOf(view), () => abort.abort(), { requestId });
    const result = await collect(events, prompts.length * n);
    const reply: Completion = {
      ...meta,
      choices: result.texts.map((text, index) => ({
        text,
        index,
        logprobs: req.logprobs == null ? null : completionLogprobs(result.logprobs[index] ?? []),
        finish_reason: result.finishReasons[index] ?? "stop",
      })),
      usage: usageBody(result.usage),
    };
    return c.json(reply, 200);
  });
}
