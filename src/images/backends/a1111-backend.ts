import { AppError } from "../../errors.js";
import type { GenerateOptions, GeneratedImage, ImageBackend, ImageRequest } from "../image-backend.js";

export interface A1111Options {
  /** The server's base URL, e.g. http://gpu-box:7860 (AUTOMATIC1111, Forge or SD.Next with --api). */
  url: string;
  /** A request that has not answered in this long fails with 503 (and is interrupted). */
  timeoutMs: number;
  /** How often progress is asked for while a request runs. */
  progressIntervalMs?: number;
  /** The ControlNet model for each preprocessor, e.g. canny → control_v11p_sd15_canny. */
  controlNetModels?: Partial<Record<string, string>>;
}

/**
 * A diffusion server that speaks the AUTOMATIC1111 web API: POST /sdapi/v1/txt2img or
 * /img2img, ControlNet as an `alwayson_scripts.controlnet` unit, progress from
 * GET /sdapi/v1/progress, cancel with POST /sdapi/v1/interrupt. A server that is down,
 * refuses or does not answer in time is a 503 for the request, never a hang.
 */
export class A1111Backend implements ImageBackend {
  readonly description: string;

  constructor(private readonly options: A1111Options) {
    this.description = `a1111 ${options.url}`;
  }

  async generate(request: ImageRequest, options: GenerateOptions = {}): Promise<GeneratedImage[]> {
    const endpoint = request.init ? "/sdapi/v1/img2img" : "/sdapi/v1/txt2img";
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const polling = this.pollProgress(options, signal);
    try {
      const answer = await this.call(endpoint, this.body(request), signal);
      return this.images(answer, request);
    } catch (error) {
      if (signal.aborted) {
        // Stops the server's work too: it would otherwise finish an image nobody waits for.
        // Best effort: a server that cannot take the interrupt either is already failing this request.
        await this.call("/sdapi/v1/interrupt", {}, AbortSignal.timeout(2_000)).catch(() => undefined);
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        throw new AppError("unavailable", `The image server did not answer within ${this.options.timeoutMs} ms.`, {
          detail: `image server ${this.options.url}`,
        });
      }
      throw error;
    } finally {
      polling.stop();
    }
  }

  /** The request in the web API's terms. */
  private body(request: ImageRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      prompt: request.prompt,
      negative_prompt: request.negativePrompt ?? "",
      width: request.width,
      height: request.height,
      cfg_scale: request.cfgScale,
      steps: request.steps,
      seed: request.seed,
      batch_size: request.samples,
      n_iter: 1,
      send_images: true,
      save_images: false,
      ...(request.sampler ? { sampler_name: request.sampler } : {}),
    };
    if (request.init) {
      body.init_images = [request.init.image.toString("base64")];
      body.denoising_strength = request.init.strength;
    }
    if (request.control) {
      body.alwayson_scripts = {
        controlnet: {
          args: [
            {
              enabled: true,
              image: request.control.image.toString("base64"),
              module: request.control.name,
              model: this.options.controlNetModels?.[request.control.name] ?? "None",
              weight: request.control.scale,
              resize_mode: "Crop and Resize",
              pixel_perfect: true,
            },
          ],
        },
      };
    }
    return body;
  }

  /** The first `samples` images (ControlNet may append its detected maps) and their seeds. */
  private images(answer: unknown, request: ImageRequest): GeneratedImage[] {
    const { images, info } = (answer ?? {}) as { images?: unknown; info?: unknown };
    if (!Array.isArray(images) || images.length < request.samples || !images.every((i) => typeof i === "string")) {
      throw new AppError("unavailable", "The image server answered without the images; please retry.", {
        detail: `image server ${this.options.url}`,
      });
    }
    let seeds: number[] = [];
    try {
      const parsed = JSON.parse(typeof info === "string" ? info : "{}") as { all_seeds?: unknown };
      if (Array.isArray(parsed.all_seeds)) seeds = parsed.all_seeds.filter((s): s is number => Number.isInteger(s));
    } catch {
      // An answer without readable info: the seeds are the ones asked for.
    }
    return images.slice(0, request.samples).map((b64, i) => ({
      png: Buffer.from(b64 as string, "base64"),
      seed: seeds[i] ?? request.seed + i,
      finishReason: "SUCCESS" as const,
    }));
  }

  private pollProgress(options: GenerateOptions, signal: AbortSignal) {
    if (!options.onProgress) return { stop: () => {} };
    const timer = setInterval(async () => {
      // A poll that fails only leaves this interval without news; the generation goes on.
      const progress = (await this.call("/sdapi/v1/progress?skip_current_image=true", undefined, signal).catch(
        () => undefined,
      )) as { state?: { sampling_step?: unknown; sampling_steps?: unknown } } | undefined;
      const step = progress?.state?.sampling_step;
      const steps = progress?.state?.sampling_steps;
      if (typeof step === "number" && typeof steps === "number" && steps > 0 && !signal.aborted) {
        options.onProgress?.(Math.min(step, steps), steps);
      }
    }, this.options.progressIntervalMs ?? 500);
    return { stop: () => clearInterval(timer) };
  }

  /** GET (no body) or POST JSON; any failure to get a good answer is a 503 naming the server. */
  private async call(path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.options.url.replace(/\/+$/, "")}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (cause) {
      if (signal.aborted) throw cause;
      throw new AppError("unavailable", "The image server is unreachable; please retry.", {
        cause,
        detail: `image server ${this.options.url}: ${(cause as Error).message}`,
      });
    }
    if (!response.ok) {
      const text = (await response.text().catch(() => "")).slice(0, 200);
      throw new AppError("unavailable", `The image server failed (HTTP ${response.status}); please retry.`, {
        detail: `image server ${this.options.url} answered ${path.split("?")[0]} with HTTP ${response.status}${text ? `: ${text}` : ""}`,
      });
    }
    return response.json();
  }
}
