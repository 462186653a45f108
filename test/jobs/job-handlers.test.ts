import { describe, expect, it } from "vitest";
import { checkHandlers } from "../../src/jobs/job-handlers.js";

describe("checkHandlers", () => {
  it("refuses a consumer missing a handler for one of its kinds", () => {
    expect(() => checkHandlers("inference", {})).toThrow(/inference/);
    expect(() => checkHandlers("inference", { inference: async () => {} })).not.toThrow();
    expect(() => checkHandlers("control", { deploy: async () => {} })).toThrow(/undeploy/);
    expect(() => checkHandlers("control", { deploy: async () => {}, undeploy: async () => {} })).not.toThrow();
  });
});
