import { z } from "zod";
import { checkJsonSchema } from "./json-schema-subset.js";
import {
  MAX_GRAMMAR_CHARS,
  MAX_LOGIT_BIAS,
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
  /**
   * Locally typical sampling: only the tokens whose surprisal is nearest the distribution's
   * entropy, as many as make up this much probability, may be chosen. 1 (or absent) is off.
   */
  typicalP: z.number().gt(0).max(1).optional(),
  /**
   * A prompt too long for the context with maxTokens: "error" (the default) refuses it,
   * "truncate" drops its beginning until it fits (see the engine's generate).
   */
  onContextOverflow: z.enum(["error", "truncate"]).optional(),
  /** [token id, bias]: the bias is added to the token's logit before sampling; -100 bans it. */
  logitBias: z
    .array(z.tuple([z.number().int().min(0), z.number().min(-100).max(100)]))
    .max(MAX_LOGIT_BIAS)
    .optional(),
});
export type Sampling = z.infer<typeof samplingSchema>;

/** A prompt or an embedding input: text, or token IDs of the model's vocabulary (checked by the worker). */
export const textOrTokensSchema = z.union([z.string(), z.array(z.number().int().min(0)).min(1).max(MAX_TOKENS)]);
export type TextOrTokens = z.infer<typeof textOrTokensSchema>;

/** A call of a tool the model made: `arguments` is the JSON text of the arguments object. */
export const toolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
export type ToolCall = z.infer<typeof toolCallSchema>;

/**
 * A chat's message. An assistant's may hold the tool calls it made (and empty content); a
 * tool's carries a call's result, naming the call it answers.
 */
export const chatMessageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({ role: z.literal("assistant"), content: z.string(), toolCalls: z.array(toolCallSchema).optional() }),
  z.object({ role: z.literal("tool"), content: z.string(), toolCallId: z.string() }),
]);
export type ChatMessage = z.infer<typeof chatMessageSchema>;

/** A function the model may call: its parameters are a JSON schema of the arguments object. */
export const toolFunctionSchema = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});
export type ToolFunction = z.infer<typeof toolFunctionSchema>;

/**
 * The tools a chat offers the model and how it may use them: `auto`, the model chooses between
 * text and calls; `required`, it calls one or more; `{name}`, it calls that one. `parallel`: more
 * than one call in an answer. (Tools offered with OpenAI's `none` are not offered at all.)
 */
export const toolUseSchema = z.object({
  tools: z.array(toolFunctionSchema).min(1),
  choice: z.union([z.enum(["auto", "required"]), z.object({ name: z.string() })]),
  parallel: z.boolean(),
});
export type ToolUse = z.infer<typeof toolUseSchema>;
