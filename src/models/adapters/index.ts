export { ADDON_FILE_NAMES, checkAddonFileName, type AddonFileName } from "./addon-file-names.js";
export { readAddonManifest, type AddonManifest } from "./addon-manifest.js";
export type { AddonLimits, AddonLoraWeight, AddonPlan } from "./addon-plan.js";
export { validateAddon } from "./validate-addon.js";
export { convertAddon } from "./convert-addon.js";
