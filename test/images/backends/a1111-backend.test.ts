import sharp from "sharp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "../../../src/errors.js";
import { A1111Backend } from "../../../src/images/backends/a1111-backend.js";
import type { ImageRequest } from "../../../src/images/image-backend.js";
import { freePort } from "../../../bench/src/free-port.js";
import { FakeA1111 } from "../../helpers/fake-a1111.js";

const request: ImageRequest = {
  prompt: "a lighthouse at dusk",
  negativePrompt: "blurry",
  width: 64,
  height: 48,
  cfgScale: 6.5,
  steps: 20,
  seed: 1234,
  samples: 2,
  sampler: "DPM++ 2M",
};

describe("the AUTOMATIC1111 backend", () => {
  const server = new FakeA1111();
  let backend: A1111Backend;
  beforeAll(async () => {
    await server.start();
    backend = new A1111Backend({
      url: server.url,
      timeoutMs: 2_000,
      progressIntervalMs: 20,
      controlNetModels: { canny: "control_v11p_sd15_canny" },
    });
  });
  beforeEach(() => server.reset());
  afterAll(() => server.close());

  it("sends txt2img with every field mapped, and returns the PNGs with the server's seeds", async () => {
    const images = await backend.generate(request);
    const sent = server.requests.find((r) => r.path === "/sdapi/v1/txt2img")!.body;
    expect(sent).toMatchObject({
      prompt: "a lighthouse at dusk",
      negative_prompt: "blurry",
      width: 64,
      height: 48,
      cfg_scale: 6.5,
      steps: 20,
      seed: 1234,
      batch_size: 2,
      n_iter: 1,
      sampler_name: "DPM++ 2M",
    });
    expect(sent).not.toHaveProperty("init_images");
    expect(images.map((i) => i.seed)).toEqual([1334, 1335]);
    for (const image of images) {
      expect(await sharp(image.png).metadata()).toMatchObject({ format: "png", width: 64, height: 48 });
    }
  });

  it("sends img2img with the init image in base64 and the strength as denoising_strength", async () => {
    const init = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#00ff00" } })
      .png()
      .toBuffer();
    await backend.generate({ ...request, samples: 1, init: { image: init, strength: 0.35 } });
    const sent = server.requests.find((r) => r.path === "/sdapi/v1/img2img")!.body;
    expect(sent.init_images).toEqual([init.toString("base64")]);
    expect(sent.denoising_strength).toBe(0.35);
  });

  it("adds a ControlNet unit, and keeps only the asked-for images (not the detected map)", async () => {
    server.extraImages = 1;
    const control = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#000" } })
      .png()
      .toBuffer();
    const images = await backend.generate({ ...request, control: { image: control, name: "canny", scale: 0.5 } });
    expect(images).toHaveLength(2);
    const sent = server.requests.find((r) => r.path === "/sdapi/v1/txt2img")!.body;
    expect(sent.alwayson_scripts).toEqual({
      controlnet: {
        args: [
          expect.objectContaining({
            enabled: true,
            image: control.toString("base64"),
            module: "canny",
            model: "control_v11p_sd15_canny",
            weight: 0.5,
          }),
        ],
      },
    });
  });

  it("reports the server's progress while it works", async () => {
    server.delayMs = 300;
    const seen: [number, number][] = [];
    await backend.generate(request, { onProgress: (step, steps) => seen.push([step, steps]) });
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.every(([, steps]) => steps === 20)).toBe(true);
    expect(seen.map(([step]) => step)).toEqual([...seen.map(([step]) => step)].sort((a, b) => a - b));
  });

  it("interrupts the server when the request is cancelled", async () => {
    server.delayMs = 1_500;
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error("client gone")), 100);
    await expect(backend.generate(request, { signal: abort.signal })).rejects.toThrow("client gone");
    expect(server.paths()).toContain("/sdapi/v1/interrupt");
  });

  it("is a 503, not a hang, when the server is too slow, answers an error, or is down", async () => {
    server.delayMs = 1_500;
    const slow = new A1111Backend({ url: server.url, timeoutMs: 200 });
    const timedOut = await slow.generate(request).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(AppError);
    expect((timedOut as AppError).status).toBe(503);
    expect((timedOut as AppError).message).toMatch(/did not answer within 200 ms/);
    expect(server.paths()).toContain("/sdapi/v1/interrupt");

    server.reset();
    server.failWith = 500;
    const failed = await backend.generate(request).catch((e: unknown) => e);
    expect((failed as AppError).status).toBe(503);
    // What the server said is the operator's (the logs), not the client's.
    expect((failed as AppError).message).toBe("The image server failed (HTTP 500); please retry.");
    expect((failed as AppError).detail).toMatch(/HTTP 500.*CUDA out of memory/);

    const down = new A1111Backend({ url: `http://127.0.0.1:${await freePort()}`, timeoutMs: 2_000 });
    const started = Date.now();
    const refused = await down.generate(request).catch((e: unknown) => e);
    expect((refused as AppError).status).toBe(503);
    expect((refused as AppError).message).toMatch(/unreachable/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
