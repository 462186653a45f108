import { readAddonBase } from "./addon-base.js";
import type { AddonManifest } from "./addon-manifest.js";
import type { AddonLimits, AddonPlan } from "./addon-plan.js";
import { validateGgufLoraAddon } from "./validate-gguf-lora.js";
import { validatePeftAddon } from "./validate-peft.js";

/**
 * Validates an addon against its base model's GGUF file (its header only). Every problem is
 * AppError("invalid_request", "<file>: <problem>") naming the addon file and the tensor or
 * key at fault; a base model file Hearth could not serve is reported under its own name.
 */
export async function validateAddon(
  files: ReadonlyMap<string, string>,
  manifest: AddonManifest,
  baseModelFile: string,
  limits: AddonLimits,
): Promise<AddonPlan> {
  if (!Number.isSafeInteger(limits.maxRank) || limits.maxRank < 1)
    throw new Error(`maxRank ${limits.maxRank} is not a positive integer`);
  const base = await readAddonBase(baseModelFile);
  return manifest.format === "peft"
    ? validatePeftAddon(files, base, limits)
    : validateGgufLoraAddon(files, base, limits);
}
