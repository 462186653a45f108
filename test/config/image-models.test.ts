import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { parseImageModels } from "../../src/config/image-models.js";

describe("HEARTH_IMAGE_MODELS", () => {
  it("serves hearth-sketch by default, and what the operator names otherwise", () => {
    expect(loadConfig({}).images.models).toEqual([{ id: "hearth-sketch", backend: { kind: "sketch" } }]);
    expect(loadConfig({ HEARTH_IMAGE_MODELS: "" }).images.models).toEqual([]);
    expect(parseImageModels(" sketchy=sketch , sdxl=a1111:http://gpu-box:7860 ")).toEqual([
      { id: "sketchy", backend: { kind: "sketch" } },
      { id: "sdxl", backend: { kind: "a1111", url: "http://gpu-box:7860" } },
    ]);
  });

  it("refuses what it cannot serve, saying why", () => {
    for (const [text, why] of [
      ["sketch", /must be <model id>=<backend>/],
      ["Bad_ID=sketch", /must be <model id>=<backend>/],
      ["x=dalle", /the backends are sketch and a1111:<url>/],
      ["x=a1111:ftp://host", /a1111: takes an http\(s\) URL/],
      ["x=sketch,x=sketch", /named twice/],
    ] as const) {
      expect(() => parseImageModels(text), text).toThrow(why);
      expect(() => loadConfig({ HEARTH_IMAGE_MODELS: text })).toThrow(/HEARTH_IMAGE_MODELS/);
    }
  });
});
