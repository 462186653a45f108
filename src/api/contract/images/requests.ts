import { z } from "@hono/zod-openapi";
import { CONTROL_NET_NAMES } from "../../../images/image-backend.js";

/**
 * The image generation requests, in the shape hosted image APIs use (snake_case fields).
 * Numbers are coerced, since image-to-image and control-net send them as multipart form
 * fields; per-model bounds (the largest size) are checked by the service.
 */

const multipleOf8 = (what: string) =>
  z.coerce
    .number()
    .int()
    .min(64, { message: `${what} must be at least 64` })
    .max(2048, { message: `${what} must be at most 2048` })
    .refine((v) => v % 8 === 0, { message: `${what} must be a multiple of 8` });

export const textToImageFields = {
  prompt: z
    .string({ message: "prompt is required: what the image shows" })
    .min(1, { message: "prompt is required: what the image shows" })
    .max(2000)
    .openapi({ description: "What the image shows." }),
  negative_prompt: z.string().max(2000).optional().openapi({ description: "What it must not show." }),
  width: multipleOf8("width").optional().openapi({ description: "Pixels, a multiple of 8; default per model." }),
  height: multipleOf8("height").optional().openapi({ description: "Pixels, a multiple of 8; default per model." }),
  cfg_scale: z.coerce
    .number()
    .min(0)
    .max(35)
    .default(7)
    .openapi({ description: "How literally the prompt is followed." }),
  steps: z.coerce.number().int().min(1).max(150).default(30).openapi({ description: "Refinement steps." }),
  seed: z.coerce
    .number()
    .int()
    .min(0)
    .max(4_294_967_295)
    .default(0)
    .openapi({ description: "0 (or absent) draws one; the seed used is always given back." }),
  samples: z.coerce.number().int().min(1).max(4).default(1).openapi({ description: "Images to make, 1–4." }),
  sampler: z.string().max(64).optional().openapi({ description: "The sampler, for backends that have several." }),
  safety_check: z
    .union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")])
    .optional()
    .openapi({ description: "Accepted; hearth-sketch draws shapes only." }),
};

export const textToImageBody = z.object(textToImageFields).openapi("TextToImageRequest");
export type TextToImageBody = z.infer<typeof textToImageBody>;

const file = (description: string) => z.any().openapi({ type: "string", format: "binary", description });

export const imageToImageForm = z
  .object({
    ...textToImageFields,
    init_image: file("The start image (PNG, JPEG or WebP)."),
    init_image_mode: z.enum(["IMAGE_STRENGTH", "STEP_SCHEDULE"]).default("IMAGE_STRENGTH"),
    image_strength: z.coerce
      .number()
      .min(0)
      .max(1)
      .default(0.35)
      .openapi({ description: "IMAGE_STRENGTH: how much of the init image stays (1 keeps it, 0 ignores it)." }),
    step_schedule_start: z.coerce
      .number()
      .min(0)
      .max(1)
      .default(0.65)
      .openapi({ description: "STEP_SCHEDULE: where in the schedule to start (0 ignores the init image)." }),
    step_schedule_end: z.coerce.number().min(0).max(1).optional(),
  })
  .openapi("ImageToImageRequest");
export type ImageToImageForm = z.infer<typeof imageToImageForm>;

export const controlNetForm = z
  .object({
    ...textToImageFields,
    control_image: file("The structure image."),
    control_net_name: z
      .enum(CONTROL_NET_NAMES, { message: `control_net_name must be one of: ${CONTROL_NET_NAMES.join(", ")}` })
      .openapi({ description: "The preprocessor: canny (edges)." }),
    conditioning_scale: z.coerce
      .number()
      .min(0)
      .max(2)
      .default(0.5)
      .openapi({ description: "How strongly the control image shapes the result." }),
  })
  .openapi("ControlNetRequest");
export type ControlNetForm = z.infer<typeof controlNetForm>;
