import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobFinished } from "../../../src/workers/worker.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";

/** The three image endpoints through the queue, on a real worker with the image role and hearth-sketch. */

const PATH = "/v1/image_generation/accounts/hearth/models/hearth-sketch";

describe("image generation", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startTestHearth({
      env: { HEARTH_MAX_IMAGE_BYTES: "200000", HEARTH_MAX_IMAGE_PIXELS: String(1000 * 1000) },
    });
  });
  afterAll(() => hearth?.close());

  const post = (path: string, body: string | FormData, headers: Record<string, string> = {}) =>
    fetch(`${hearth.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, ...headers },
      body,
    });
  const json = (path: string, body: unknown, accept?: string) =>
    post(path, JSON.stringify(body), { "content-type": "application/json", ...(accept ? { accept } : {}) });
  const form = (path: string, fields: Record<string, string | Blob>, accept?: string) => {
    const data = new FormData();
    for (const [name, value] of Object.entries(fields)) data.append(name, value);
    return post(path, data, accept ? { accept } : {});
  };
  const png = (width: number, height: number, color: string) =>
    sharp({ create: { width, height, channels: 3, background: color } })
      .png()
      .toBuffer();
  const redShare = async (image: Buffer) => {
    const raw = await sharp(image).removeAlpha().raw().toBuffer();
    let red = 0;
    for (let i = 0; i < raw.length; i += 3) if (raw[i]! > 140 && raw[i]! > raw[i + 1]! + 60) red++;
    return red / (raw.length / 3);
  };
  async function expectError(res: Response, status: number, param: string | null, message?: RegExp) {
    const body = (await res.json()) as { error: { param: string | null; message: string } };
    expect(res.status, JSON.stringify(body)).toBe(status);
    expect(body.error.param).toBe(param);
    if (message) expect(body.error.message).toMatch(message);
  }

  const circle = { prompt: "a red circle on a white background", width: 128, height: 128, steps: 10, seed: 5 };

  it("answers JSON by default: the images in base64, with their seeds", async () => {
    const res = await json(PATH, { ...circle, samples: 2 });
    expect(res.status).toBe(200);
    const images = (await res.json()) as { base64: string; finishReason: string; seed: number }[];
    expect(images.map((i) => [i.finishReason, i.seed])).toEqual([
      ["SUCCESS", 5],
      ["SUCCESS", 6],
    ]);
    const first = Buffer.from(images[0]!.base64, "base64");
    expect(await sharp(first).metadata()).toMatchObject({ format: "png", width: 128, height: 128 });
    expect(await redShare(first)).toBeGreaterThan(0.1);
    const again = (await (await json(PATH, { ...circle, samples: 2 })).json()) as typeof images;
    expect(again[0]!.base64).toBe(images[0]!.base64);
    const drawn = (await (await json(PATH, { ...circle, seed: 0 })).json()) as typeof images;
    expect(drawn[0]!.seed).toBeGreaterThan(0);
  });

  it("answers the image itself for Accept image/png or image/jpeg, the seed in a header", async () => {
    const res = await json(PATH, circle, "image/png");
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("seed")).toBe("5");
    expect(res.headers.get("finish-reason")).toBe("SUCCESS");
    expect(await sharp(Buffer.from(await res.arrayBuffer())).metadata()).toMatchObject({ format: "png", width: 128 });
    const jpeg = await json(PATH, circle, "image/jpeg");
    expect(await sharp(Buffer.from(await jpeg.arrayBuffer())).metadata()).toMatchObject({ format: "jpeg" });
    await expectError(await json(PATH, { ...circle, samples: 2 }, "image/png"), 400, "samples", /holds one image/);
  });

  it("streams progress events, then the result, for Accept text/event-stream", async () => {
    const res = await json(PATH, { ...circle, steps: 8 }, "text/event-stream");
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = (await res.text()).split("\n\n").filter(Boolean);
    const progress = frames.filter((f) => f.startsWith("event: progress"));
    expect(progress.map((f) => JSON.parse(f.split("data: ")[1]!))).toEqual(
      Array.from({ length: 8 }, (_, i) => ({ step: i + 1, steps: 8 })),
    );
    expect(frames.at(-1)).toMatch(/^event: result\ndata: \[\{"base64":/);
  });

  it("image-to-image: image_strength 1 keeps the init image; STEP_SCHEDULE from 0 renders the prompt", async () => {
    const init = await png(128, 128, "#1060d0");
    const kept = await form(
      `${PATH}/image_to_image`,
      {
        ...circle,
        width: "128",
        height: "128",
        steps: "10",
        seed: "5",
        init_image: new Blob([init], { type: "image/png" }),
        image_strength: "1",
      },
      "image/png",
    );
    expect(kept.status).toBe(200);
    expect(await redShare(Buffer.from(await kept.arrayBuffer()))).toBeLessThan(0.01);
    const replaced = await form(
      `${PATH}/image_to_image`,
      {
        ...circle,
        width: "128",
        height: "128",
        steps: "10",
        seed: "5",
        init_image: new Blob([init]),
        init_image_mode: "STEP_SCHEDULE",
        step_schedule_start: "0",
      },
      "image/png",
    );
    expect(await redShare(Buffer.from(await replaced.arrayBuffer()))).toBeGreaterThan(0.1);
  });

  it("control-net canny: follows the control image; an unknown preprocessor is a 400 listing the known", async () => {
    const control = await sharp(
      Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128"><rect width="128" height="128" fill="white"/><rect x="20" y="20" width="60" height="80" fill="black"/></svg>',
      ),
    )
      .png()
      .toBuffer();
    const res = await form(`${PATH}/control_net`, {
      prompt: "a blue line",
      width: "128",
      height: "128",
      steps: "5",
      control_image: new Blob([control]),
      control_net_name: "canny",
    });
    expect(res.status).toBe(200);
    const unknown = await form(`${PATH}/control_net`, {
      prompt: "x",
      control_image: new Blob([control]),
      control_net_name: "depth",
    });
    await expectError(unknown, 400, "control_net_name", /one of: canny/);
  });

  it("refuses bad input with a clear 4xx, never a 500", async () => {
    const init = (blob: Blob, extra: Record<string, string> = {}) =>
      form(`${PATH}/image_to_image`, {
        prompt: "a star",
        steps: "3",
        width: "64",
        height: "64",
        init_image: blob,
        ...extra,
      });
    await expectError(await init(new Blob(["not an image at all"])), 400, "init_image", /could not be read/);
    const truncated = (await png(64, 64, "#ff0000")).subarray(0, 60);
    const cut = await init(new Blob([truncated]));
    expect([400]).toContain(cut.status);
    const svg = new Blob(['<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>']);
    await expectError(await init(svg), 400, "init_image", /is SVG; send a PNG, JPEG, WebP/);
    await expectError(await init(new Blob([await png(1200, 1000, "#000")])), 413, "init_image", /1000000 pixels/);
    // A file just over HEARTH_MAX_IMAGE_BYTES (200000 here), inside the form's margin: refused by name.
    const big = await sharp(Buffer.alloc(260 * 260 * 3, 7), { raw: { width: 260, height: 260, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(big.length).toBeGreaterThan(200_000);
    await expectError(await init(new Blob([big])), 413, "init_image", /the limit is 200000/);
    await expectError(await form(`${PATH}/image_to_image`, { prompt: "a star" }), 400, "init_image", /required/);
    await expectError(await json(`${PATH}/image_to_image`, { prompt: "a star" }), 400, null, /multipart\/form-data/);
    await expectError(await json(PATH, { ...circle, width: 100 }), 400, "width", /multiple of 8/);
    await expectError(await json(PATH, { ...circle, width: 2048 }), 400, "width", /at most 1024/);
    await expectError(await json(PATH, { ...circle, steps: 500 }), 400, "steps");
    await expectError(await json(PATH, { ...circle, samples: 9 }), 400, "samples");
    await expectError(await json(PATH, { ...circle, cfg_scale: -1 }), 400, "cfg_scale");
    await expectError(await json(PATH, { width: 64 }), 400, "prompt", /required/);
    await expectError(
      await json("/v1/image_generation/accounts/hearth/models/hearth-tiny", circle),
      400,
      "model",
      /text model/,
    );
    await expectError(await json("/v1/image_generation/accounts/someone/models/art", circle), 404, "model");
  });

  it("an image it cannot read is a 400 in Hearth's words, the decoder's only in the log", async () => {
    const noisy = await sharp(Buffer.from(Array.from({ length: 64 * 64 * 3 }, (_, i) => (i * 7919) % 251)), {
      raw: { width: 64, height: 64, channels: 3 },
    })
      .png()
      .toBuffer();
    const jpeg = await sharp(noisy).jpeg().toBuffer();
    let state = 12345;
    const random = Buffer.from(Array.from({ length: 4096 }, () => (state = (state * 1103515245 + 12345) >>> 0) >>> 24));
    const unreadable: [string, Buffer][] = [
      // Their headers read, so the API queues them; the worker's decode fails.
      ["a truncated PNG", noisy.subarray(0, noisy.length >> 1)],
      ["a truncated JPEG", jpeg.subarray(0, jpeg.length >> 1)],
      // Refused by the API from the header.
      ["a PNG cut inside its header", noisy.subarray(0, 60)],
      ["random bytes", random],
      ["a PNG header over garbage", Buffer.concat([noisy.subarray(0, 33), random])],
      ["a JPEG marker over garbage", Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), random])],
      ["a GIF header over HTML", Buffer.from("GIF89a<script>alert(1)</script>")],
      ["a WebP header over garbage", Buffer.concat([Buffer.from("RIFF\x00\x10\x00\x00WEBPVP8 "), random])],
    ];
    const details: string[] = [];
    const onFinished = (finished: JobFinished) => {
      if (finished.error?.detail) details.push(finished.error.detail);
    };
    hearth.worker!.events.on("job-finished", onFinished);
    try {
      for (const [what, bytes] of unreadable) {
        for (const [path, field, extra] of [
          ["image_to_image", "init_image", {}],
          ["control_net", "control_image", { control_net_name: "canny" }],
        ] as const) {
          const res = await form(`${PATH}/${path}`, {
            prompt: "a star",
            steps: "3",
            width: "64",
            height: "64",
            [field]: new Blob([bytes]),
            ...extra,
          });
          const body = (await res.json()) as { error: { param: string | null; message: string } };
          expect(res.status, `${what} to ${path}: ${JSON.stringify(body)}`).toBe(400);
          expect(body.error).toMatchObject({
            param: field,
            message: `${field} could not be read: it is not a PNG, JPEG, WebP, GIF, TIFF or HEIF/AVIF image, or it is damaged.`,
          });
        }
      }
    } finally {
      hearth.worker!.events.off("job-finished", onFinished);
    }
    // The two truncated files, at two endpoints each: the worker logs what libvips said.
    expect(details).toHaveLength(4);
    for (const detail of details) expect(detail).toMatch(/^sharp: .*(libpng|JPEG)/);
  });

  it("cancels the job when the client goes away", async () => {
    const finished = new Promise<JobFinished>((resolve) => hearth.worker!.events.once("job-finished", resolve));
    const abort = new AbortController();
    const res = await fetch(`${hearth.url}${PATH}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${hearth.apiKey}`,
        "content-type": "application/json",
        accept: "text/event-stream",
      },
      body: JSON.stringify({ prompt: "many stars", width: 512, height: 512, steps: 150, samples: 4 }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the first progress event: the worker is rendering
    abort.abort();
    const outcome = await finished;
    expect(outcome.error?.message).toMatch(/cancelled/);
  });
});
