import { randomInt, randomUUID } from "node:crypto";
import type { RedisClient } from "../../redis/connection.js";
import sharp, { type Metadata } from "sharp";
import type { Config } from "../../config.js";
import { AppError } from "../../errors.js";
import type { RouteTicket } from "./admission.js";
import type { ImageParams } from "../../images/image-backend.js";
import { UPLOAD_FORMATS, unreadableImage, unsupportedImage } from "../../images/uploaded-image.js";
import { imageBlobs } from "../../jobs/image-job.js";
import type { ImageRequestPayload, InferenceClient } from "../../requests/inference-client.js";
import type { ModelResolver } from "./model-resolver.js";

/** What an image request asks for, in Hearth's terms (the routes convert the wire fields). */
export interface ImageAsk {
  prompt: string;
  negativePrompt?: string;
  width?: number;
  height?: number;
  cfgScale: number;
  steps: number;
  /** 0: draw one. */
  seed: number;
  samples: number;
  sampler?: string;
  init?: { file: Blob; strength: number };
  control?: { file: Blob; name: "canny"; scale: number };
}

export type ImageRunEvent =
  | { type: "progress"; step: number; steps: number }
  | { type: "result"; images: { png: Buffer; seed: number; finishReason: "SUCCESS" }[] };

/** Size bounds by backend: the embedded renderer is for laptops; a diffusion server takes SDXL sizes. */
const SIZES = { sketch: { default: 512, max: 1024 }, a1111: { default: 1024, max: 2048 } } as const;

/**
 * Image generation for the API: resolves an image model, checks the sizes and the uploaded
 * images (before anything is queued), parks the uploads in Redis, runs the job and hands back
 * its progress and images.
 */
export class ImageGeneration {
  constructor(
    private readonly models: ModelResolver,
    private readonly inference: InferenceClient,
    private readonly redis: RedisClient,
    private readonly config: Config,
  ) {}

  /**
   * `admit` lets the request in (services/admission.ts: the account's in-flight cap and its
   * place in the queue) once it is known to be valid, before its images are stored.
   */
  async *run(
    callerAccountId: string,
    name: string,
    ask: ImageAsk,
    signal: AbortSignal,
    admit: (requestId: string) => Promise<RouteTicket>,
  ): AsyncGenerator<ImageRunEvent> {
    const { target } = await this.models.forImages(callerAccountId, name);
    const backend = this.config.images.models.find((m) => m.id === target.baseModelId)?.backend.kind ?? "a1111";
    const size = SIZES[backend];
    const params: ImageParams = {
      prompt: ask.prompt,
      negativePrompt: ask.negativePrompt,
      width: this.checkSize("width", ask.width ?? size.default, size.max, name),
      height: this.checkSize("height", ask.height ?? size.default, size.max, name),
      cfgScale: ask.cfgScale,
      steps: ask.steps,
      seed: ask.seed === 0 ? randomInt(1, 2 ** 32 - 1) : ask.seed,
      samples: ask.samples,
      sampler: ask.sampler,
    };
    const requestId = randomUUID();
    const ticket = await admit(requestId);
    const prefix = this.config.redisPrefix;
    let init: ImageRequestPayload["init"];
    let control: ImageRequestPayload["control"];
    try {
      init = ask.init && {
        blob: await this.park(ask.init.file, "init_image", imageBlobs.key(prefix, requestId, "init")),
        strength: ask.init.strength,
      };
      control = ask.control && {
        blob: await this.park(ask.control.file, "control_image", imageBlobs.key(prefix, requestId, "control")),
        name: ask.control.name,
        scale: ask.control.scale,
      };
    } catch (error) {
      await ticket.release();
      throw error;
    }
    const events = ticket.track(
      this.inference.runImage({ requestId, model: target, params, init, control }, signal, ticket.queueing),
    );
    for await (const event of events) {
      if (event.type === "progress") yield event;
      if (event.type === "done") {
        const images = [];
        for (const image of event.images ?? []) {
          const png = await imageBlobs.take(this.redis, image.blob);
          if (!png) throw new AppError("unavailable", "The generated image expired before it was read; please retry.");
          images.push({ png, seed: image.seed, finishReason: image.finishReason });
        }
        yield { type: "result", images };
      }
    }
  }

  private checkSize(param: "width" | "height", value: number, max: number, name: string): number {
    if (value > max) {
      throw new AppError("invalid_request", `Invalid ${param}: ${value} is more than ${name} makes (at most ${max}).`, {
        param,
      });
    }
    return value;
  }

  /**
   * Checks an uploaded image from its header alone (sharp reads the dimensions without
   * decoding the pixels) and stores it for the worker: too large a file or too many pixels
   * is a 413 naming the limit, anything sharp cannot read a 400.
   */
  private async park(file: Blob, param: string, key: string): Promise<string> {
    const { maxImageBytes, maxInputPixels } = this.config.images;
    if (file.size > maxImageBytes) {
      throw new AppError("payload_too_large", `${param} is ${file.size} bytes; the limit is ${maxImageBytes}.`, {
        param,
      });
    }
    const bytes = Buffer.from(await file.arrayBuffer());
    let meta: Metadata;
    try {
      meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    } catch (cause) {
      throw unreadableImage(param, cause);
    }
    const pixels = (meta.width ?? 0) * (meta.height ?? 0);
    if (pixels > maxInputPixels) {
      throw new AppError(
        "payload_too_large",
        `${param} is ${meta.width}×${meta.height} pixels; the limit is ${maxInputPixels} pixels.`,
        { param },
      );
    }
    if (!meta.format || !UPLOAD_FORMATS.includes(meta.format)) throw unsupportedImage(param, meta.format);
    if (pixels === 0) throw unreadableImage(param, new Error(`${meta.format} header without dimensions`));
    await imageBlobs.put(this.redis, key, bytes);
    return key;
  }
}
