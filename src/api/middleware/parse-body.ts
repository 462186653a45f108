import type { Context } from "hono";
import type { z } from "zod";
import { AppError } from "../../errors.js";
import { validate } from "../validation.js";

/** Reads a JSON body and validates it; any problem is a 400 naming the field. */
export async function parseBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch (cause) {
    if (cause instanceof AppError) throw cause;
    throw new AppError("invalid_request", "The request body is not valid JSON.", { cause });
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new AppError("invalid_request", "The request body must be a JSON object.");
  }
  return validate(schema, body);
}

/**
 * Reads a multipart/form-data body (fields and files) and validates its fields; files
 * come back as Blobs in `files` by field name. Anything else than multipart is a 400.
 */
export async function parseForm<S extends z.ZodType>(
  c: Context,
  schema: S,
): Promise<{ fields: z.output<S>; files: Map<string, Blob> }> {
  if (!/^multipart\/form-data\b/i.test(c.req.header("content-type") ?? "")) {
    throw new AppError("invalid_request", "Send this request as multipart/form-data, its images as file fields.");
  }
  let form: Record<string, string | File | (string | File)[]>;
  try {
    form = await c.req.parseBody({ all: false });
  } catch (cause) {
    if (cause instanceof AppError) throw cause;
    throw new AppError("invalid_request", "The multipart body could not be read.", { cause });
  }
  const files = new Map<string, Blob>();
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(form)) {
    if (value instanceof Blob) files.set(name, value);
    fields[name] = value;
  }
  return { fields: validate(schema, fields), files };
}

/** Validates the query string; any problem is a 400 naming the parameter. */
export function parseQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return validate(schema, c.req.query());
}
