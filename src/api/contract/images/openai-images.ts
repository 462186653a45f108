import { z } from "@hono/zod-openapi";

/**
 * OpenAI's image generation request and answer (`POST /v1/images/generations`, what
 * `client.images.generate` of the OpenAI SDKs sends), served by Hearth's image models. Fields
 * Hearth cannot honour are refused by name, never ignored.
 */

/** Most images one request makes (the image job's `samples`). */
const MAX_IMAGES = 4;

const refused = (field: string, why: string) =>
  z
    .any()
    .refine((v) => v === undefined || v === null, { message: `${field} is not supported: ${why}` })
    .optional()
    .openapi({ description: `Not supported (${why}): only absent or null is accepted; anything else is a 400.` });

/** "<width>x<height>": each a multiple of 8 from 64 to 2048 (the model may allow less). */
const size = z
  .string()
  .regex(/^\d{1,4}x\d{1,4}$/, { message: 'size is "<width>x<height>" in pixels, such as "512x512"' })
  .transform((v) => v.split("x").map(Number) as [number, number])
  .refine(([w, h]) => [w, h].every((d) => d >= 64 && d <= 2048 && d % 8 === 0), {
    message: "size's width and height must be multiples of 8 from 64 to 2048",
  });

export const openAiImageRequestSchema = z
  .object({
    model: z
      .string({ message: "model is required: an image model, such as accounts/hearth/models/hearth-sketch" })
      .min(1)
      .openapi({ description: "An image model (kind image; GET /v1/models lists them)." }),
    prompt: z
      .string({ message: "prompt is required: what the image shows" })
      .min(1, { message: "prompt is required: what the image shows" })
      .max(2000)
      .openapi({ description: "What the image shows." }),
    n: z
      .number()
      .int()
      .min(1)
      .max(MAX_IMAGES, { message: `n may be at most ${MAX_IMAGES}` })
      .nullish()
      .openapi({ description: `Images to make, 1–${MAX_IMAGES}. Default 1.` }),
    size: size.nullish().openapi({
      description:
        'Pixels, "<width>x<height>", each a multiple of 8 from 64 to the model\'s largest. Default per model.',
    }),
    response_format: z
      .enum(["b64_json", "url"])
      .nullish()
      .refine((v) => v !== "url", {
        message: 'response_format "url" is not supported: Hearth keeps no images to link to; ask for "b64_json"',
      })
      .openapi({ description: "Only `b64_json` (the default): Hearth keeps no images to serve by URL." }),
    output_format: z
      .literal("png", { message: 'output_format may only be "png"' })
      .nullish()
      .openapi({ description: "Only `png`, which is what the images are." }),
    user: z.string().max(256).nullish().openapi({ description: "Accepted, recorded nowhere." }),
    quality: refused("quality", "the models have no quality levels; steps are set per model"),
    style: refused("style", "the models have no styles"),
    background: refused("background", "the models draw no transparency"),
    moderation: refused("moderation", "Hearth runs no moderation model"),
    output_compression: refused("output_compression", "the images are PNG"),
    partial_images: refused("partial_images", "images are not streamed here"),
    stream: z
      .literal(false, { message: "stream is not supported on /v1/images/generations" })
      .nullish()
      .openapi({ description: "Only false: use /v1/image_generation with Accept: text/event-stream for progress." }),
  })
  .openapi("CreateImageRequest");
export type OpenAiImageRequest = z.infer<typeof openAiImageRequestSchema>;

export const openAiImagesSchema = z
  .object({
    created: z.number().int().openapi({ description: "Unix seconds." }),
    data: z.array(z.object({ b64_json: z.string().openapi({ description: "The PNG, base64." }) })),
  })
  .openapi("ImagesResponse");
export type OpenAiImages = z.infer<typeof openAiImagesSchema>;
