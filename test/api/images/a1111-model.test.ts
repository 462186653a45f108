import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeA1111 } from "../../helpers/fake-a1111.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";

/**
 * An operator's diffusion server behind an image model (HEARTH_IMAGE_MODELS=sdxl=a1111:<url>),
 * end to end: API, queue, worker, server; and the server going away.
 */
describe("an image model served by an AUTOMATIC1111 server", () => {
  const server = new FakeA1111();
  let hearth: TestHearth;
  beforeAll(async () => {
    await server.start();
    hearth = await startTestHearth({
      env: { HEARTH_IMAGE_MODELS: `sdxl=a1111:${server.url}`, HEARTH_IMAGE_BACKEND_TIMEOUT_MS: "2000" },
    });
  });
  afterAll(async () => {
    await hearth?.close();
    await server.close();
  });

  const generate = (body: unknown) =>
    fetch(`${hearth.url}/v1/image_generation/accounts/hearth/models/sdxl`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("is listed as an image model and renders through the server, with its defaults", async () => {
    const models = await fetch(`${hearth.url}/v1/models`, { headers: { authorization: `Bearer ${hearth.apiKey}` } });
    expect(((await models.json()) as { data: { id: string; kind: string }[] }).data).toContainEqual(
      expect.objectContaining({ id: "accounts/hearth/models/sdxl", kind: "image" }),
    );
    const res = await generate({ prompt: "a lighthouse", negative_prompt: "fog", seed: 42, samples: 2 });
    expect(res.status).toBe(200);
    const images = (await res.json()) as { seed: number }[];
    expect(images.map((i) => i.seed)).toEqual([142, 143]);
    const sent = server.requests.find((r) => r.path === "/sdapi/v1/txt2img")!.body;
    expect(sent).toMatchObject({ prompt: "a lighthouse", negative_prompt: "fog", width: 1024, height: 1024, seed: 42 });
  });

  it("is a 503, not a hang, when the server fails or is too slow", async () => {
    server.failWith = 500;
    const failed = await generate({ prompt: "a lighthouse" });
    expect(failed.status).toBe(503);
    server.reset();
    server.delayMs = 5_000;
    const slow = await generate({ prompt: "a lighthouse" });
    expect(slow.status).toBe(503);
    expect(((await slow.json()) as { error: { message: string } }).error.message).toMatch(
      /did not answer within 2000 ms/,
    );
    server.reset();
  });
});
