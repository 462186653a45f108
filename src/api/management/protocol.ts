import { z } from "zod";
import { MODEL_KINDS, MODEL_STATES } from "../../db/schema/models.js";
import type { ListModelsFilter } from "../../db/queries/models.js";
import { AppError } from "../../errors.js";
import { chatTemplateProblem } from "./chat-template-check.js";

/**
 * The management API's wire types (what the CLI and the Python client send), as zod
 * schemas. Field names are camelCase, as in Fireworks' REST API.
 */

/** Model IDs: lowercase letters, digits and hyphens, 1–63 characters, starting with a letter or digit. */
export const MODEL_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A chat template for an adapter (Jinja, as in a GGUF's tokenizer.chat_template). */
export const conversationConfigSchema = z
  .object({
    template: z
      .string()
      .min(1)
      .max(65_536)
      .superRefine((template, ctx) => {
        const problem = chatTemplateProblem(template);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
  })
  .strict();
export type ConversationConfig = z.infer<typeof conversationConfigSchema>;

const displayName = z.string().max(256);
const description = z.string().max(4096);

export const createModelBody = z
  .object({
    modelId: z
      .string()
      .regex(MODEL_ID_PATTERN, "must be 1–63 lowercase letters, digits and hyphens, starting with a letter or digit"),
    model: z
      .object({
        displayName: displayName.optional(),
        description: description.optional(),
        /** accounts/<account>/models/<model> of a base model; may also come from the upload's hearth.json. */
        baseModel: z.string().min(1).max(300).optional(),
        conversationConfig: conversationConfigSchema.optional(),
      })
      .strict()
      .default({}),
  })
  .strict();
export type CreateModelBody = z.infer<typeof createModelBody>;

export const updateModelBody = z
  .object({
    displayName: displayName.optional(),
    description: description.optional(),
    /** null removes the adapter's own template. */
    conversationConfig: conversationConfigSchema.nullable().optional(),
  })
  .strict();
export type UpdateModelBody = z.infer<typeof updateModelBody>;

export const listModelsQuery = z.object({
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
  pageToken: z.string().max(512).optional(),
  filter: z.string().max(512).optional(),
});

export const deleteModelQuery = z.object({
  force: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
});

/** Page tokens are opaque to clients: the last model ID of the previous page. */
export const pageTokens = {
  encode: (lastModelId: string) => Buffer.from(JSON.stringify({ after: lastModelId })).toString("base64url"),
  decode(token: string): string {
    try {
      const { after } = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { after?: unknown };
      if (typeof after === "string" && MODEL_ID_PATTERN.test(after)) return after;
    } catch {
      // fall through
    }
    throw new AppError("invalid_request", "Invalid pageToken: pass the nextPageToken of a previous page.", {
      param: "pageToken",
    });
  },
};

const FILTER_TERM = /^(state|kind|baseModel)\s*=\s*"?([A-Za-z0-9/_-]+)"?$/;

/**
 * A small filter language: `field=value` terms joined by AND (or spaces), over
 * `state` (UPLOADING, VALIDATING, READY, FAILED), `kind` (base, lora) and `baseModel`.
 */
export function parseModelFilter(text: string | undefined): ListModelsFilter {
  const filter: ListModelsFilter = {};
  if (!text?.trim()) return filter;
  const bad = (why: string) =>
    new AppError(
      "invalid_request",
      `Invalid filter ${JSON.stringify(text)}: ${why}. Example: state=READY AND kind=lora.`,
      {
        param: "filter",
      },
    );
  for (const term of text.trim().split(/\s+AND\s+|\s*&&\s*|\s+(?=\w+\s*=)/i)) {
    const match = FILTER_TERM.exec(term.trim());
    if (!match) throw bad(`cannot read ${JSON.stringify(term)}; terms are field=value over state, kind and baseModel`);
    const [, field, value] = match as unknown as [string, "state" | "kind" | "baseModel", string];
    if (field === "state") {
      const state = value.toUpperCase();
      if (!(MODEL_STATES as readonly string[]).includes(state)) throw bad(`state is one of ${MODEL_STATES.join(", ")}`);
      filter.state = state as ListModelsFilter["state"];
    } else if (field === "kind") {
      if (!(MODEL_KINDS as readonly string[]).includes(value)) throw bad(`kind is one of ${MODEL_KINDS.join(", ")}`);
      filter.kind = value as ListModelsFilter["kind"];
    } else {
      filter.baseModel = value;
    }
  }
  return filter;
}
