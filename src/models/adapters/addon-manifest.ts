import { fileProblem } from "../formats/model-file-error.js";
import {
  GGUF_ADAPTER,
  HEARTH_JSON,
  PEFT_CONFIG,
  PEFT_WEIGHTS,
  checkAddonFileName,
  isJsonObject,
  readAddonJson,
} from "./addon-file-names.js";
import { parsePeftConfig } from "./peft-config.js";

/**
 * What an addon says about itself, from its small files: its format, its base model and
 * its chat template. hearth.json holds {"base_model": "...", "conversation_config": {...}}.
 */

export interface AddonManifest {
  format: "peft" | "gguf";
  /** hearth.json base_model, else adapter_config's base_model_name_or_path (may be absent for gguf without hearth.json). */
  baseModel: string | undefined;
  /** Which file named the base model. */
  baseModelFrom: "hearth.json" | "adapter_config.json" | undefined;
  conversationConfig: Record<string, unknown> | undefined;
}

const HEARTH_JSON_KEYS = ["base_model", "conversation_config"];
const MAX_BASE_MODEL_LENGTH = 512;

/**
 * Reads hearth.json and adapter_config.json from `files` (file name → local path) and
 * decides the format. Every problem: AppError("invalid_request", "<file name>: <problem>").
 */
export async function readAddonManifest(files: ReadonlyMap<string, string>): Promise<AddonManifest> {
  for (const name of files.keys()) checkAddonFileName(name);
  const format = addonFormat(files);

  let configBaseModel: string | undefined;
  const configFile = files.get(PEFT_CONFIG);
  if (configFile !== undefined)
    configBaseModel = parsePeftConfig(await readAddonJson(configFile, PEFT_CONFIG)).baseModel;

  const hearthFile = files.get(HEARTH_JSON);
  const hearth = hearthFile === undefined ? {} : parseHearthJson(await readAddonJson(hearthFile, HEARTH_JSON));
  const baseModel = hearth.baseModel ?? configBaseModel;
  return {
    format,
    baseModel,
    baseModelFrom:
      hearth.baseModel !== undefined ? HEARTH_JSON : configBaseModel !== undefined ? PEFT_CONFIG : undefined,
    conversationConfig: hearth.conversationConfig,
  };
}

function addonFormat(files: ReadonlyMap<string, string>): AddonManifest["format"] {
  const gguf = files.has(GGUF_ADAPTER);
  const config = files.has(PEFT_CONFIG);
  const weights = files.has(PEFT_WEIGHTS);
  if (gguf && (config || weights)) {
    throw fileProblem(
      GGUF_ADAPTER,
      `an addon is either ${GGUF_ADAPTER} or ${PEFT_CONFIG} with ${PEFT_WEIGHTS}, not both`,
    );
  }
  if (gguf) return "gguf";
  if (config && weights) return "peft";
  if (config) throw fileProblem(PEFT_WEIGHTS, `missing: ${PEFT_CONFIG} needs the adapter's weights in ${PEFT_WEIGHTS}`);
  if (weights) throw fileProblem(PEFT_CONFIG, `missing: ${PEFT_WEIGHTS} needs its ${PEFT_CONFIG}`);
  throw fileProblem(
    PEFT_WEIGHTS,
    `missing: an addon is ${PEFT_CONFIG} with ${PEFT_WEIGHTS} (PEFT), or ${GGUF_ADAPTER} (llama.cpp)`,
  );
}

function parseHearthJson(json: Record<string, unknown>): {
  baseModel?: string;
  conversationConfig?: Record<string, unknown>;
} {
  for (const key of Object.keys(json)) {
    if (!HEARTH_JSON_KEYS.includes(key))
      throw fileProblem(HEARTH_JSON, `unknown key ${JSON.stringify(key)} (accepted: ${HEARTH_JSON_KEYS.join(", ")})`);
  }
  const { base_model: baseModel, conversation_config: conversationConfig } = json;
  if (
    baseModel !== undefined &&
    (typeof baseModel !== "string" || baseModel.length === 0 || baseModel.length > MAX_BASE_MODEL_LENGTH)
  ) {
    throw fileProblem(HEARTH_JSON, `base_model must be a model name of 1 to ${MAX_BASE_MODEL_LENGTH} characters`);
  }
  if (conversationConfig !== undefined && !isJsonObject(conversationConfig)) {
    throw fileProblem(HEARTH_JSON, "conversation_config must be an object");
  }
  return {
    ...(baseModel !== undefined ? { baseModel } : {}),
    ...(conversationConfig !== undefined ? { conversationConfig } : {}),
  };
}
