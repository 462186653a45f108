import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HearthApiError, HearthClient, normalizeServer } from "../../src/cli/api-client.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { testModelDir } from "../helpers/test-models.js";

/** The CLI's HTTP client on its own: what the binary's tests do not reach easily. */

const WEIGHTS = path.join(testModelDir, "examples", "hearth-tiny-lora", "adapter_model.safetensors");

let hearth: TestHearth;
beforeAll(async () => {
  hearth = await startTestHearth({ worker: false, env: { HEARTH_MAX_UPLOAD_BYTES: "4096" } });
});
afterAll(() => hearth?.close());

describe("HearthClient", () => {
  it("reports the server's refusal of an oversized file, answered before the body was sent", async () => {
    const client = new HearthClient(hearth.url, hearth.apiKey);
    await client.createModel("default", { modelId: "too-big" });
    const error = await client
      .uploadFile("default", "too-big", "adapter_model.safetensors", WEIGHTS)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HearthApiError);
    expect(error).toMatchObject({ status: 413, code: "payload_too_large" });
    expect((await client.getModel("default", "too-big")).files).toEqual([]);
  });

  it("reads the server address with or without /v1", () => {
    expect(normalizeServer("http://h:8080")).toBe("http://h:8080");
    expect(normalizeServer("http://h:8080/v1/")).toBe("http://h:8080");
    expect(normalizeServer("https://h.example/hearth/v1")).toBe("https://h.example/hearth");
    expect(() => normalizeServer("h:8080")).toThrow(/only http/);
    expect(() => normalizeServer("nope")).toThrow(/not a URL/);
  });
});
