import { z } from "zod";
import type { RedisClient } from "../redis/connection.js";

/**
 * An image generation job, and the images that travel beside it. Images are megabytes:
 * too big for a pub/sub message (Redis drops a subscriber whose output buffer overflows,
 * and every request on that API process with it) and heavier than a job should be. So the
 * API puts an uploaded init or control image, and the worker each generated image, in a
 * Redis key of its own with a short TTL; jobs and events carry the key, and whoever reads
 * an image takes it (GETDEL). docs/images.md gives the sizes measured.
 */

/** How long an image waits in Redis for its reader. */
export const IMAGE_BLOB_TTL_SECONDS = 300;

export const imageBlobs = {
  key: (prefix: string, requestId: string, name: string) => `${prefix}:image-blob:${requestId}:${name}`,
  async put(redis: RedisClient, key: string, data: Buffer): Promise<void> {
    await redis.set(key, data, "EX", IMAGE_BLOB_TTL_SECONDS);
  },
  /** The image, once: reading removes it. Null when it expired or was taken. */
  take(redis: RedisClient, key: string): Promise<Buffer | null> {
    return redis.getdelBuffer(key);
  },
};

export const imageParamsSchema = z.object({
  prompt: z.string(),
  negativePrompt: z.string().optional(),
  width: z.number().int().min(8),
  height: z.number().int().min(8),
  cfgScale: z.number(),
  steps: z.number().int().min(1),
  seed: z.number().int().min(1),
  samples: z.number().int().min(1).max(4),
  sampler: z.string().optional(),
});

export const imagePayloadFields = {
  params: imageParamsSchema,
  /** Image-to-image: the Redis key of the start image and the strength. */
  init: z.object({ blob: z.string().min(1), strength: z.number().min(0).max(1) }).optional(),
  /** Control-net: the Redis key of the control image, the preprocessor and its weight. */
  control: z.object({ blob: z.string().min(1), name: z.literal("canny"), scale: z.number().min(0).max(2) }).optional(),
};
