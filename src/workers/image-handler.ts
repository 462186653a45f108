import type { RedisClient } from "../redis/connection.js";
import { AppError } from "../errors.js";
import type { ImageBackend } from "../images/image-backend.js";
import { imageBlobs } from "../jobs/image-job.js";
import type { ImagePayload } from "../jobs/jobs.js";
import type { StreamEvent } from "../requests/stream.js";

/**
 * Runs one image job: takes the uploaded images from Redis, has the backend render, puts
 * each result in Redis and ends with `done` naming them (jobs/image-job.ts says why).
 * Progress goes out step by step.
 */
export async function runImageJob(
  payload: ImagePayload,
  backend: ImageBackend,
  redis: RedisClient,
  prefix: string,
  signal: AbortSignal,
  emit: (event: StreamEvent) => void,
): Promise<number> {
  const init = payload.init
    ? { image: await uploaded(redis, payload.init.blob), strength: payload.init.strength }
    : undefined;
  const control = payload.control
    ? { image: await uploaded(redis, payload.control.blob), name: payload.control.name, scale: payload.control.scale }
    : undefined;
  const images = await backend
    .generate(
      { ...payload.params, init, control },
      { signal, onProgress: (step, steps) => emit({ type: "progress", step, steps }) },
    )
    .catch((error: unknown) => {
      // Cancelled (the client left, or the worker is shutting down): not a failure of the worker.
      if (signal.aborted) throw new AppError("unavailable", "The image request was cancelled.", { cause: error });
      throw error;
    });
  const stored = [];
  for (const [i, image] of images.entries()) {
    const blob = imageBlobs.key(prefix, payload.requestId, `out-${i}`);
    await imageBlobs.put(redis, blob, image.png);
    stored.push({ blob, seed: image.seed, finishReason: image.finishReason });
  }
  emit({ type: "done", choices: [], usage: { promptTokens: 0, completionTokens: 0 }, images: stored });
  return stored.length;
}

async function uploaded(redis: RedisClient, blob: string): Promise<Buffer> {
  const image = await imageBlobs.take(redis, blob);
  if (!image) {
    throw new AppError(
      "unavailable",
      "The uploaded image expired before a worker took the request; please send it again.",
    );
  }
  return image;
}
