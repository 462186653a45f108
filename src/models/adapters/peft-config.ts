import { fileProblem } from "../formats/model-file-error.js";
import { PEFT_CONFIG, isJsonObject as isObject } from "./addon-file-names.js";
import { alphaProblem } from "./lora-checks.js";
import { SUPPORTED_MODULES_TEXT, isLoraModuleKind } from "./lora-targets.js";

/**
 * A PEFT LoRA's adapter_config.json: what Hearth needs from it (rank, alpha, rsLoRA,
 * per-module rank and alpha patterns, target modules), and refusals for the options
 * that make an adapter something other than plain LoRA on linear weights.
 */

export interface PeftConfig {
  baseModel: string | undefined;
  r: number;
  loraAlpha: number;
  useRslora: boolean;
  /** A list of module names or name suffixes; a string (a regular expression, or "all-linear"); null when absent. */
  targetModules: readonly string[] | string | null;
  /** In file order; the first key matching a module wins, as in PEFT. */
  rankPattern: readonly (readonly [string, number])[];
  alphaPattern: readonly (readonly [string, number])[];
}

/** Options that change what the adapter computes in ways llama.cpp's LoRA cannot express. */
const refusedWhenSet: Record<string, string> = {
  use_dora: "DoRA adapters (use_dora) are not supported",
  lora_bias: "LoRA biases (lora_bias) are not supported",
  use_qalora: "QA-LoRA adapters (use_qalora) are not supported",
  layer_replication: "layer_replication is not supported",
  trainable_token_indices: "trainable_token_indices (trained embedding rows) is not supported",
  alora_invocation_tokens: "activated LoRA (alora_invocation_tokens) is not supported",
  target_parameters: "target_parameters (LoRA on parameters, not modules) is not supported",
};

export function parsePeftConfig(json: Record<string, unknown>): PeftConfig {
  const fail = (problem: string) => fileProblem(PEFT_CONFIG, problem);
  const isSet = (value: unknown) =>
    value !== undefined &&
    value !== null &&
    value !== false &&
    !(Array.isArray(value) && value.length === 0) &&
    !(isObject(value) && Object.keys(value).length === 0);

  if (json.peft_type !== undefined && json.peft_type !== null && json.peft_type !== "LORA") {
    throw fail(`peft_type is ${JSON.stringify(json.peft_type)}; only LORA adapters are supported`);
  }
  for (const [key, problem] of Object.entries(refusedWhenSet)) if (isSet(json[key])) throw fail(problem);
  if (isSet(json.modules_to_save)) {
    throw fail("modules_to_save lists modules saved as full weights, not as a LoRA; Hearth serves LoRA weights only");
  }
  if (json.fan_in_fan_out !== undefined && json.fan_in_fan_out !== null && json.fan_in_fan_out !== false) {
    throw fail("fan_in_fan_out (transposed weights, as in GPT-2's Conv1D) is not supported");
  }
  if (json.bias !== undefined && json.bias !== null && json.bias !== "none") {
    throw fail(
      `bias is ${JSON.stringify(json.bias)}; only "none" is supported (trained biases are not part of a LoRA)`,
    );
  }

  const baseModel = json.base_model_name_or_path;
  if (baseModel !== undefined && baseModel !== null && typeof baseModel !== "string")
    throw fail("base_model_name_or_path must be a string");

  const r = json.r;
  if (!isPositiveInteger(r))
    throw fail(r === undefined ? "r (the LoRA rank) is missing" : "r must be a positive integer");
  const loraAlpha = json.lora_alpha;
  if (!isPositiveNumber(loraAlpha))
    throw fail(loraAlpha === undefined ? "lora_alpha is missing" : "lora_alpha must be a positive number");
  const alphaIs = alphaProblem(loraAlpha);
  if (alphaIs !== undefined) throw fail(`lora_alpha is ${alphaIs}`);
  const useRslora = json.use_rslora ?? false;
  if (typeof useRslora !== "boolean") throw fail("use_rslora must be true or false");

  return {
    baseModel: typeof baseModel === "string" && baseModel.length > 0 ? baseModel : undefined,
    r,
    loraAlpha,
    useRslora,
    targetModules: parseTargetModules(json.target_modules, fail),
    rankPattern: parsePattern(json.rank_pattern, "rank_pattern", isPositiveInteger, "a positive integer", fail),
    alphaPattern: parsePattern(
      json.alpha_pattern,
      "alpha_pattern",
      isPositiveNumber,
      "a positive number",
      fail,
      alphaProblem,
    ),
  };
}

function parseTargetModules(value: unknown, fail: (problem: string) => Error): PeftConfig["targetModules"] {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") {
    if (value.length === 0) throw fail("target_modules is empty");
    return value;
  }
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === "string" && v.length > 0)) {
    throw fail("target_modules must be a list of module names or a string");
  }
  if (value.length === 0) throw fail("target_modules is empty");
  for (const name of value) {
    const kind = name.split(".").at(-1)!;
    if (!isLoraModuleKind(kind)) {
      throw fail(
        `target_modules includes ${name}, which Hearth cannot apply a LoRA to (supported modules: ${SUPPORTED_MODULES_TEXT})`,
      );
    }
  }
  return value;
}

/**
 * PEFT matches a pattern key against a module's full name with re.match(rf"(.*\.)?({key})$"):
 * the whole name or a dot-separated suffix of it. Keys are kept to name characters, where
 * "." is the only regular-expression metacharacter and matches any character, as in PEFT.
 */
const PATTERN_KEY = /^[A-Za-z0-9_.]{1,256}$/;

function parsePattern(
  value: unknown,
  field: string,
  valid: (v: unknown) => v is number,
  expected: string,
  fail: (problem: string) => Error,
  limit: (v: number) => string | undefined = () => undefined,
): [string, number][] {
  if (value === undefined || value === null) return [];
  if (!isObject(value)) throw fail(`${field} must be an object mapping module names to values`);
  return Object.entries(value).map(([key, v]) => {
    if (!PATTERN_KEY.test(key)) {
      throw fail(
        `${field} key ${JSON.stringify(key)} is not a module name; Hearth accepts module names and name suffixes such as "q_proj" or "model.layers.0.self_attn.q_proj"`,
      );
    }
    if (!valid(v)) throw fail(`${field}[${JSON.stringify(key)}] must be ${expected}`);
    const problem = limit(v);
    if (problem !== undefined) throw fail(`${field}[${JSON.stringify(key)}] is ${problem}`);
    return [key, v];
  });
}

function patternValue(pattern: PeftConfig["rankPattern"], module: string): number | undefined {
  for (const [key, value] of pattern) {
    if (new RegExp(`^(?:.*\\.)?(?:${key})$`).test(module)) return value;
  }
  return undefined;
}

/** The rank PEFT gives a module (its full name in the base model, e.g. "model.layers.0.self_attn.q_proj"). */
export function peftModuleRank(config: PeftConfig, module: string): number {
  return patternValue(config.rankPattern, module) ?? config.r;
}

/** PEFT's scaling of a module's B·A: alpha / r, or alpha / sqrt(r) with rsLoRA. */
export function peftModuleScale(config: PeftConfig, module: string): number {
  const rank = peftModuleRank(config, module);
  const alpha = patternValue(config.alphaPattern, module) ?? config.loraAlpha;
  return config.useRslora ? alpha / Math.sqrt(rank) : alpha / rank;
}

/**
 * Whether target_modules selects a module: true or false for a list (PEFT matches a name
 * exactly or as a dot-separated suffix) and for "all-linear" (every linear layer but the
 * output layer); undefined for a regular expression, which Hearth does not evaluate.
 */
export function targetModulesInclude(config: PeftConfig, module: string): boolean | undefined {
  const targets = config.targetModules;
  if (targets === null) return undefined;
  if (typeof targets === "string") return targets === "all-linear" ? module !== "lm_head" : undefined;
  return targets.some((t) => module === t || module.endsWith(`.${t}`));
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

function isPositiveNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}
