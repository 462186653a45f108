import { essentials } from "./essentials.js";
import { images } from "./images.js";
import { limits } from "./limits.js";
import { operations } from "./operations.js";
import { scaling } from "./scaling.js";
import { security } from "./security.js";
import type { Tier } from "./spec.js";
import { storage } from "./storage.js";
import { timeouts } from "./timeouts.js";
import { workerCapacity } from "./worker-capacity.js";

/**
 * Every environment variable Hearth reads, by tier, essentials first (config.ts loads them;
 * `npm run config:docs` prints the tables of the README and docs/configuration.md).
 */
export const tiers = [
  { id: "essentials", title: "Start here", variables: essentials },
  { id: "storage", title: "Storage", variables: storage },
  { id: "scaling", title: "Scaling out", variables: scaling },
  { id: "worker-capacity", title: "Worker capacity", variables: workerCapacity },
  { id: "limits", title: "Limits and fairness", variables: limits },
  { id: "timeouts", title: "Timeouts", variables: timeouts },
  { id: "images", title: "Images", variables: images },
  { id: "security", title: "Security", variables: security },
  { id: "operations", title: "Operations", variables: operations },
] as const satisfies readonly Tier[];

export const variables = {
  ...essentials,
  ...storage,
  ...scaling,
  ...workerCapacity,
  ...limits,
  ...timeouts,
  ...images,
  ...security,
  ...operations,
};
