import type { OutputConstraint } from "../../domain/generation.js";
import { checkGbnf, type GbnfCheck } from "../../domain/gbnf/check-gbnf.js";
import { checkJsonSchema } from "../../domain/json-schema-subset.js";
import { MAX_SCHEMA_CHARS } from "../../domain/sampling-limits.js";
import { AppError } from "../../errors.js";
import type { ChatRequest, CompletionRequest } from "../contract/openai/requests.js";

type ResponseFormat = (ChatRequest | CompletionRequest)["response_format"];

/** Any JSON object (json_object). */
const ANY_OBJECT = { type: "object", additionalProperties: true };

/**
 * OpenAI's response_format → the constraint the engine enforces. A schema outside the subset
 * Hearth can enforce is a 400 naming the keyword; a GBNF grammar that does not parse, or is too
 * ambiguous to run in bounded time, is a 400 saying why (checkGbnf; the worker checks again).
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
  if (format.type === "grammar") {
    const check = gbnfVerdict(format.grammar);
    if (!check.ok) throw new AppError("invalid_request", check.reason, { param: "response_format" });
    return { type: "gbnf", grammar: format.grammar };
  }
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

/** The last verdicts on grammars: a client sends the same grammar again and again. */
const GBNF_VERDICTS = 64;
const gbnfVerdicts = new Map<string, GbnfCheck>();

function gbnfVerdict(grammar: string): GbnfCheck {
  const known = gbnfVerdicts.get(grammar);
  if (known) {
    gbnfVerdicts.delete(grammar);
    gbnfVerdicts.set(grammar, known);
    return known;
  }
  const verdict = checkGbnf(grammar);
  gbnfVerdicts.set(grammar, verdict);
  if (gbnfVerdicts.size > GBNF_VERDICTS) gbnfVerdicts.delete(gbnfVerdicts.keys().next().value!);
  return verdict;
}
