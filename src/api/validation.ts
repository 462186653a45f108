import type { z } from "zod";
import { AppError } from "../errors.js";
import { REFUSAL } from "./contract/openai/parameter-policy.js";

/**
 * Validates a request's input (a JSON body, a form's fields, a query string, a batch's line) with
 * its contract's schema; any problem is a 400 naming the field, in Hearth's words.
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error.issues[0]!, input);
}

/**
 * The 400 for a zod issue, naming the field. Zod 4 leaves the offending value out of its
 * issues, so whether a field is missing or of the wrong type is read from the input itself:
 * a missing one is "required", a present one of the wrong type says what was expected.
 */
function validationError(issue: z.core.$ZodIssue, input: unknown): AppError {
  if (issue.code === "unrecognized_keys") {
    const param = paramName([...issue.path, issue.keys[0]!]);
    return new AppError(
      "invalid_request",
      `Unknown parameter: ${param}. It is not one Hearth takes (docs/api.md lists them); nothing was done.`,
      { param },
    );
  }
  const param = paramName(issue.path);
  const value = valueAt(input, issue.path);
  let message: string;
  if (issue.code === "custom" && issue.params?.[REFUSAL] === true) {
    message = issue.message;
  } else if (value === undefined && (issue.code === "invalid_type" || issue.code === "invalid_union")) {
    message = `${param} is required.`;
  } else if (issue.code === "invalid_type") {
    message = `Invalid ${param}: expected ${expectedName(issue.expected)}, got ${describe(value)}.`;
  } else {
    message = `Invalid ${param}: ${issue.message}`;
  }
  return new AppError("invalid_request", message, { param });
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

const EXPECTED: Record<string, string> = {
  int: "an integer",
  number: "a number",
  string: "a string",
  boolean: "a boolean",
  array: "an array",
  object: "an object",
  record: "an object",
  null: "null",
};

function expectedName(expected: string): string {
  return EXPECTED[expected] ?? expected;
}

/**
 * What was sent, in a few words: a number, boolean or short string as written (a form
 * field's "1.5" where an integer is expected), otherwise only its kind.
 */
function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length <= 24 ? `the string ${JSON.stringify(value)}` : "a string";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** ["messages", 0, "role"] → "messages[0].role", as OpenAI names parameters. */
export function paramName(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "body";
}
