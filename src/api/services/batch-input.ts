import type { z } from "zod";
import { AppError } from "../../errors.js";
import {
  batchLineSchema,
  type BatchEndpoint,
  type BatchInput,
  type BatchLine,
  type BatchLineError,
  type NumberedLine,
} from "../../domain/batch.js";
import { chatCompletionsRoute, completionsRoute, embeddingsRoute } from "../contract/openai/routes.js";
import { validate } from "../validation.js";

/** Each endpoint's request body, as its route validates it. */
const BODIES: Record<BatchEndpoint, z.ZodType> = {
  "/v1/chat/completions": bodyOf(chatCompletionsRoute),
  "/v1/completions": bodyOf(completionsRoute),
  "/v1/embeddings": bodyOf(embeddingsRoute),
};

function bodyOf(route: { request: { body: { content: { "application/json": { schema: z.ZodType } } } } }) {
  return route.request.body.content["application/json"].schema;
}

/** At most this many problems are reported: the first ones, enough to fix the file. */
const MAX_ERRORS = 20;

/**
 * Reads and checks a batch's input file (JSON lines of `{custom_id, method, url, body}`) before
 * any of it runs: every line must be such an object, call the batch's endpoint, with a body the
 * endpoint takes (the same checks as a request to it, unstreamed), and a custom_id no other line
 * has. Blank lines are skipped. Any problem refuses the whole batch, naming its line.
 */
export function readBatchInput(text: string, endpoint: BatchEndpoint, maxLines: number): BatchInput {
  const lines: NumberedLine[] = [];
  const errors: BatchLineError[] = [];
  const seen = new Set<string>();
  const refuse = (line: number, message: string, param: string | null = null, code = "invalid_request") => {
    if (errors.length < MAX_ERRORS) errors.push({ code, message, param, line });
  };
  const rows = text.split("\n");
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!.trim();
    if (row === "") continue;
    const line = i + 1;
    if (lines.length + errors.length >= maxLines) {
      refuse(
        line,
        `The file has more than ${maxLines} requests, the most one batch may hold.`,
        null,
        "too_many_requests",
      );
      break;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(row);
    } catch {
      refuse(line, "The line is not valid JSON.");
      continue;
    }
    const checked = checkLine(parsed, endpoint);
    if ("error" in checked) {
      refuse(line, checked.error.message, checked.error.param);
      continue;
    }
    if (seen.has(checked.line.custom_id)) {
      refuse(line, `custom_id ${JSON.stringify(checked.line.custom_id)} is on an earlier line too.`, "custom_id");
      continue;
    }
    seen.add(checked.line.custom_id);
    lines.push({ ...checked.line, line });
  }
  if (errors.length > 0) return { errors };
  if (lines.length === 0)
    return { errors: [{ code: "empty_file", message: "The file has no requests.", param: null, line: null }] };
  return { lines };
}

function checkLine(value: unknown, endpoint: BatchEndpoint): { line: BatchLine } | { error: AppError } {
  try {
    const line = validate(batchLineSchema, value);
    if (line.url !== endpoint) {
      return {
        error: new AppError("invalid_request", `url is ${line.url}, but the batch's endpoint is ${endpoint}.`, {
          param: "url",
        }),
      };
    }
    if (line.body.stream === true) {
      return {
        error: new AppError("invalid_request", "A batch's requests are answered whole: body.stream must not be true.", {
          param: "body.stream",
        }),
      };
    }
    const body = line.body;
    const result = BODIES[endpoint].safeParse(body);
    if (!result.success) validate(BODIES[endpoint], body); // throws the 400 in the route's words
    return { line };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const param = error.param === null || error.param === undefined ? null : error.param;
    return {
      error: new AppError(error.code, error.message, {
        param:
          param && !param.startsWith("body") && !["custom_id", "method", "url"].includes(param)
            ? `body.${param}`
            : param,
      }),
    };
  }
}
