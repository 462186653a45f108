import { randomUUID } from "node:crypto";
import type { Hono } from "hono";
import { REQUEST_ID_HEADER } from "../request-id.js";
import { AppError } from "../../errors.js";
import { clientGone, type AppDeps, type AppEnv } from "../app-env.js";
import { embeddingsRoute } from "../contract/openai/routes.js";
import type { EmbeddingList } from "../contract/openai/responses.js";
import { mountRoute } from "../mount-route.js";
import { collect, usageBody } from "./collect.js";
import { embeddingEstimate } from "./token-estimate.js";
import { admitGeneration } from "../admit-generation.js";
import { checkEmbeddingTarget } from "../../jobs/jobs.js";

export function embeddingsRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  mountRoute(app, embeddingsRoute, async (c, { body: req }) => {
    const { target, embeddingLength } = await deps.models.forInference(c.get("caller").accountId, req.model);
    checkEmbeddingTarget(target);
    if (req.dimensions != null && embeddingLength != null && req.dimensions > embeddingLength) {
      throw new AppError(
        "invalid_request",
        `dimensions is ${req.dimensions}, but ${req.model} has ${embeddingLength}.`,
        { param: "dimensions" },
      );
    }
    const inputs = req.input;
    const abort = clientGone(c.req.raw);
    const requestId = randomUUID();
    c.header(REQUEST_ID_HEADER, requestId); // on errors too
    // All inputs go to the worker as one job.
    const ticket = await admitGeneration(c, deps, {
      requestId,
      model: req.model,
      estimatedTokens: embeddingEstimate(inputs),
    });
    const events = ticket.track(
      deps.inference.run({ kind: "embedding", model: target, inputs }, abort.signal, {
        requestId,
        ...ticket.queueing,
      }),
    );
    const result = await collect(events, 0);
    const base64 = req.encoding_format === "base64";
    const reply: EmbeddingList = {
      object: "list",
      data: result.embeddings.map((vector, index) => {
        const v = req.dimensions ? truncate(vector, req.dimensions) : vector;
        return { object: "embedding", index, embedding: base64 ? toBase64(v) : v };
      }),
      model: req.model,
      usage: { prompt_tokens: result.usage.promptTokens, total_tokens: usageBody(result.usage).total_tokens },
    };
    return c.json(reply, 200);
  });
}

/** The first `dimensions` components, scaled back to unit length. */
export function truncate(vector: number[], dimensions: number): number[] {
  const head = vector.slice(0, dimensions);
  const norm = Math.sqrt(head.reduce((s, x) => s + x * x, 0)) || 1;
  return head.map((x) => x / norm);
}

/** Little-endian float32, base64: what the OpenAI SDK decodes. */
function toBase64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString("base64");
}
