import type { OutputConstraint } from "../../domain/generation.js";
import { checkJsonSchema } from "../../domain/json-schema-subset.js";
import { MAX_SCHEMA_CHARS } from "../../domain/sampling-limits.js";
import { AppError } from "../../errors.js";
import type { ChatRequest, CompletionRequest } from "../contract/openai/requests.js";

type ResponseFormat = (ChatRequest | CompletionRequest)["response_format"];

/** Any JSON object (json_object). */
const ANY_OBJECT = { type: "object", additionalProperties: true };

/**
 * OpenAI's response_format → the constraint the engine enforces. A schema outside the subset
 * Hearth can enforce is a 400 naming the keyword; a GBNF grammar is parsed by the worker, which
 * refuses one that does not parse the same way.
 */
export function toConstraint(format: ResponseFormat, stop: readonly string[]): OutputConstraint | undefined {
  if (!format || format.type === "text") return undefined;
  if (stop.length > 0) {
    throw new AppError(
      "invalid_request",
      `stop cannot be combined with response_format ${format.type}: a stop string would cut the output before its end.`,
      { param: "stop" },
    );
  }
  if (format.type === "grammar") return { type: "gbnf", grammar: format.grammar };
  if (format.type === "json_object") return { type: "json_schema", schema: ANY_OBJECT };
  const schema = format.json_schema.schema ?? {};
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) {
    throw new AppError("invalid_request", `The schema is longer than ${MAX_SCHEMA_CHARS} characters of JSON.`, {
      param: "response_format",
    });
  }
  const check = checkJsonSchema(schema);
  if (!check.ok) {
    throw new AppError(
      "invalid_request",
      `response_format.json_schema.schema at ${check.at}: ${check.reason} docs/api.md lists the supported keywords.`,
      { param: "response_format" },
    );
  }
  return { type: "json_schema", schema };
}
