export * from "./accounts.js";
export * from "./api-keys.js";
export * from "./models.js";
export * from "./deployments.js";
export * from "./installation.js";
export * from "./usage.js";
export * from "./batches.js";
