/**
 * The words Hearth's data is made of: model kinds and states, deployment states, key roles
 * and the shape of IDs. The database schema stores them, the HTTP contract shows them, the
 * CLI checks input against them; this module imports nothing, so each of those can use it
 * without loading the others.
 */

/** Account and model IDs: lowercase letters, digits and hyphens, 1–63 characters, not starting with a hyphen. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const ACCOUNT_ID_PATTERN = ID_PATTERN;
export const MODEL_ID_PATTERN = ID_PATTERN;

/**
 * `base`: a GGUF file the operator serves; `lora`: an uploaded addon whose adapter applies to
 * a base; `image`: an image generation model the operator serves (docs/images.md).
 */
export const MODEL_KINDS = ["base", "lora", "image"] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

export const MODEL_STATES = ["UPLOADING", "VALIDATING", "READY", "FAILED"] as const;
export type ModelState = (typeof MODEL_STATES)[number];

/** How an addon was uploaded: a PEFT folder (converted at deploy) or a ready GGUF LoRA. */
export const ADAPTER_FORMATS = ["peft", "gguf"] as const;
export type AdapterFormat = (typeof ADAPTER_FORMATS)[number];

export const DEPLOYMENT_STATES = ["DEPLOYING", "DEPLOYED", "UNDEPLOYING", "FAILED"] as const;
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];

/**
 * What a key may do (docs/security.md). `inference`: generate (completions, chat, embeddings,
 * images, resuming streams); `models`: create, upload, validate, deploy, undeploy, change and
 * delete its account's models, and manage its API keys; `admin`: the operators' endpoints, pages and metrics. Every key
 * may read its account and the models it can see.
 */
export const API_KEY_SCOPES = ["inference", "models", "admin"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
/** A new key's scopes when its creator names none: everything but admin. */
export const DEFAULT_KEY_SCOPES: readonly ApiKeyScope[] = ["inference", "models"];
