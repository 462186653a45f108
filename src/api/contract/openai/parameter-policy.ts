import { z } from "@hono/zod-openapi";

/**
 * No parameter is dropped silently. Every top-level field of an OpenAI request is one of:
 * - **honoured**: declared by the request's schema in requests.ts, with what it does;
 * - **no effect**: a field that changes nothing about the answer by its nature (who the user
 *   is, metadata for a store Hearth does not have): accepted, its type checked, then unused;
 * - **refused**: a 400 naming it, unless it has a value that asks for nothing (absent, null,
 *   false, or the `off` value given here).
 * A field in none of these is unknown: a 400 naming it too (the schemas are strict). This file
 * holds the second and third lists; `withPolicy` joins them to a request's own fields, and
 * docs/api.md's parameter table (scripts/api-parameters.ts) is made from the result.
 */

export type Endpoint = "completions" | "chat" | "embeddings";

interface NoEffect {
  status: "no effect";
  /** Why it can change nothing. */
  why: string;
  schema: z.ZodType;
}

interface Refused {
  status: "refused";
  /** Why Hearth cannot honour it, and what to do instead; the 400's message. */
  why: string;
  /** Values that ask for nothing and are accepted (besides absent, null and false). */
  off?: (value: unknown) => boolean;
}

export type ParameterRule = NoEffect | Refused;

const userField = z.string().max(256).nullish();

const SHARED: Record<string, ParameterRule> = {
  user: {
    status: "no effect",
    why: "An end-user ID for abuse monitoring; Hearth records it nowhere.",
    schema: userField,
  },
  safety_identifier: {
    status: "no effect",
    why: "An end-user ID for abuse monitoring; Hearth records it nowhere.",
    schema: userField,
  },
  metadata: {
    status: "no effect",
    why: "Tags for stored completions; Hearth stores none.",
    schema: z.record(z.string().max(64), z.string().max(512)).nullish(),
  },
  store: {
    status: "no effect",
    why: "Hearth never stores completions for later retrieval; `true` stores nothing.",
    schema: z.boolean().nullish(),
  },
  service_tier: {
    status: "no effect",
    why: "Hearth has one tier: every request is served the same way.",
    schema: z.enum(["auto", "default", "flex", "scale", "priority"]).nullish(),
  },
  prompt_cache_key: {
    status: "no effect",
    why: "A routing hint for a prompt cache; the answer is the same without it.",
    schema: z.string().max(1024).nullish(),
  },
  prompt_cache_retention: {
    status: "no effect",
    why: "How long a prompt cache keeps a prefix; the answer is the same either way.",
    schema: z.string().max(64).nullish(),
  },
  prompt_cache_options: {
    status: "no effect",
    why: "Options of a prompt cache; the answer is the same either way.",
    schema: z.record(z.string(), z.unknown()).nullish(),
  },
  mirostat_target: { status: "refused", why: "Mirostat sampling is not available; use temperature, top_p or min_p." },
  mirostat_lr: { status: "refused", why: "Mirostat sampling is not available; use temperature, top_p or min_p." },
  ignore_eos: {
    status: "refused",
    why: "Generation always ends at the model's end-of-text token; set max_tokens for a length.",
  },
  prompt_truncate_len: {
    status: "refused",
    why: "Prompts are never cut to a length; shorten the prompt.",
  },
  raw_output: { status: "refused", why: "The raw prompt and output are not returned." },
  echo_last: { status: "refused", why: "Echoing the prompt's last tokens is not available." },
  perf_metrics_in_response: {
    status: "refused",
    why: "Performance metrics are not returned in answers; see GET /metrics.",
  },
  return_token_ids: { status: "refused", why: "Token IDs are not returned." },
  prompt_cache_max_len: {
    status: "refused",
    why: "The prompt cache's length cannot be set per request.",
  },
};

const CHAT: Record<string, ParameterRule> = {
  audio: { status: "refused", why: "Hearth answers in text only." },
  modalities: {
    status: "refused",
    why: 'Hearth answers in text only: modalities may only be ["text"].',
    off: (v) => Array.isArray(v) && v.every((m) => m === "text"),
  },
  prediction: { status: "refused", why: "Predicted outputs are not used." },
  reasoning_effort: { status: "refused", why: "No model here has a reasoning effort to set." },
  verbosity: { status: "refused", why: "No model here has a verbosity to set." },
  web_search_options: { status: "refused", why: "Hearth does not search the web." },
  moderation: { status: "refused", why: "Hearth does not moderate answers." },
  functions: { status: "refused", why: "The legacy function-calling fields are not taken: use tools." },
  function_call: { status: "refused", why: "The legacy function-calling fields are not taken: use tool_choice." },
};

const COMPLETIONS: Record<string, ParameterRule> = {
  suffix: { status: "refused", why: "Text after the insertion point (fill-in-the-middle) is not available." },
  best_of: {
    status: "refused",
    why: "Generating several completions and returning the best is not available; use n.",
    off: (v) => v === 1,
  },
  tools: { status: "refused", why: "Tool calls are only for chat completions." },
};

const EMBEDDINGS: Record<string, ParameterRule> = {
  user: SHARED.user!,
};

/** The rules of each endpoint's fields that are not honoured. */
export const PARAMETER_POLICY: Record<Endpoint, Record<string, ParameterRule>> = {
  completions: { ...SHARED, ...COMPLETIONS },
  chat: { ...SHARED, ...CHAT },
  embeddings: EMBEDDINGS,
};

/** Marks a zod issue as a refusal, whose message is said as it is. */
export const REFUSAL = "refused";

function ruleSchema(name: string, rule: ParameterRule): z.ZodType {
  if (rule.status === "no effect") return rule.schema.openapi({ description: `No effect: ${rule.why}` });
  const off = rule.off ?? (() => false);
  return z
    .any()
    .refine((v) => v === undefined || v === null || v === false || off(v), {
      message: `${name} is not supported: ${rule.why}`,
      params: { [REFUSAL]: true },
    })
    .optional()
    .openapi({ description: `Refused (400) unless absent, null or false: ${rule.why}` });
}

/**
 * The strict schema of an endpoint's request: its honoured fields and the policy's. A field
 * both honoured and in the policy is a mistake made when a feature lands (its policy entry
 * stays behind), caught here as the module loads.
 */
export function withPolicy<Shape extends z.ZodRawShape>(endpoint: Endpoint, honoured: Shape) {
  const rules = PARAMETER_POLICY[endpoint];
  const both = Object.keys(honoured).filter((name) => Object.hasOwn(rules, name));
  if (both.length > 0) {
    throw new Error(
      `${endpoint}: ${both.join(", ")} both honoured and in parameter-policy.ts: remove the policy entry`,
    );
  }
  const policy = Object.fromEntries(Object.entries(rules).map(([name, rule]) => [name, ruleSchema(name, rule)]));
  // The policy's fields are checked, then unused: the request's type has only the honoured ones.
  return z.strictObject({ ...honoured, ...policy } as Shape);
}
