import { describe, expect, it } from "vitest";
import { checkHandlers } from "../../src/workers/handlers.js";

describe("checkHandlers", () => {
  it("refuses a handler map that misses a job kind of the registry", () => {
    expect(() => checkHandlers({})).toThrow(/inference/);
    expect(() => checkHandlers({ inference: async () => {} })).not.toThrow();
  });
});
