import { z } from "zod";
import { checkJsonSchema } from "./json-schema-subset.js";
import {
  MAX_GRAMMAR_CHARS,
  MAX_SCHEMA_CHARS,
  MAX_SEED,
  MAX_STOP_CHARS,
  MAX_STOP_SEQUENCES,
  MAX_TOKENS,
} from "./sampling-limits.js";

/**
 * What a generation asks for, in Hearth's own words (not OpenAI's): how to sample, and a chat's
 * messages. The HTTP routes make them from a request, the job registry carries them to a
 * worker (which validates every job against these schemas), the engine generates from them.
 */

/**
 * What the output must be, enforced by a grammar while sampling (every token the grammar does
 * not allow is left out), and the generation ends when the grammar is complete:
 * - `json_schema`: a JSON value valid against `schema`, a JSON Schema within the subset of
 *   json-schema-subset.ts (checked here, so a worker never gets one outside it);
 * - `gbnf`: text in llama.cpp's GBNF grammar language, root rule `root` (a grammar that does not
 *   parse is refused by the engine as a 400 naming `response_format`).
 */
export const outputConstraintSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("json_schema"),
    schema: z.union([z.record(z.string(), z.unknown()), z.boolean()]).superRefine((schema, ctx) => {
      if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) {
        ctx.addIssue({ code: "custom", message: `The schema is longer than ${MAX_SCHEMA_CHARS} characters.` });
        return;
      }
      const check = checkJsonSchema(schema);
      if (!check.ok) ctx.addIssue({ code: "custom", message: `${check.reason} (at ${check.at})` });
    }),
  }),
  z.object({ type: z.literal("gbnf"), grammar: z.string().min(1).max(MAX_GRAMMAR_CHARS) }),
]);
export type OutputConstraint = z.infer<typeof outputConstraintSchema>;

export const samplingSchema = z.object({
  /** Tokens to generate; null means "until the context is full". */
  maxTokens: z.number().int().positive().max(MAX_TOKENS).nullable(),
  temperature: z.number().min(0).max(2),
  topP: z.number().gt(0).max(1).optional(),
  topK: z.number().int().min(0).optional(),
  /** Tokens less likely than minP × the most likely one's probability are left out. */
  minP: z.number().min(0).max(1).optional(),
  seed: z.number().int().min(0).max(MAX_SEED).optional(),
  stop: z.array(z.string().min(1).max(MAX_STOP_CHARS)).max(MAX_STOP_SEQUENCES),
  presencePenalty: z.number().min(-2).max(2).optional(),
  frequencyPenalty: z.number().min(-2).max(2).optional(),
  repetitionPenalty: z.number().gt(0).max(10).optional(),
  /** The output must be valid against this; absent, it is free text. */
  constraint: outputConstraintSchema.optional(),
});
export type Sampling = z.infer<typeof samplingSchema>;

export const chatMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;
