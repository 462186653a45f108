import { z } from "@hono/zod-openapi";
import { JSON_BODY_LIMIT, type Reasons } from "../errors.js";
import { contractRoute, jsonContent } from "../route.js";
import { modelParams } from "../management/params.js";
import { openAiImageRequestSchema, openAiImagesSchema } from "./openai-images.js";
import { controlNetForm, imageToImageForm, textToImageBody } from "./requests.js";

/** Image generation: text-to-image, image-to-image and control-net, under the image model's name. */

const tag = "Images";

export const generatedImageSchema = z
  .object({
    base64: z.string().openapi({ description: "The PNG, base64." }),
    finishReason: z.enum(["SUCCESS"]),
    seed: z.number().int().openapi({ description: "The seed this image was made with." }),
  })
  .openapi("GeneratedImage");
export const generatedImagesSchema = z.array(generatedImageSchema).openapi("GeneratedImages");
export type GeneratedImages = z.infer<typeof generatedImagesSchema>;

const binary = z.string().openapi({ format: "binary" });

const answers = {
  200: {
    description:
      "By the Accept header: `application/json` (the default) an array of images; `image/png` or `image/jpeg` the " +
      "image itself (samples must be 1), its seed and finish reason in the `Seed` and `Finish-Reason` headers; " +
      "`text/event-stream` `progress` events (`{step, steps}`), then one `result` event with the array.",
    headers: z.object({
      Seed: z.string().optional().openapi({ description: "With an image/* answer: the seed used." }),
      "Finish-Reason": z.string().optional().openapi({ description: "With an image/* answer: SUCCESS." }),
    }),
    content: {
      ...jsonContent(generatedImagesSchema),
      "image/png": { schema: binary },
      "image/jpeg": { schema: binary },
      "text/event-stream": {
        schema: z.string().openapi({ examples: ['event: progress\ndata: {"step":1,"steps":30}\n\n'] }),
      },
    },
  },
};

const errors = (extra: string): Reasons => ({
  invalid_request:
    "A field is missing or out of range (`param` names it): width or height not a multiple of 8 or over the " +
    `model's bounds, steps, samples or scales out of range, samples > 1 with an image Accept; the model is a text model. ${extra}`,
  not_found: "The model does not exist or the key may not use it.",
  ...JSON_BODY_LIMIT,
  rate_limited: "More than `HEARTH_MAX_QUEUE_DEPTH` requests already wait for this model; retry shortly.",
  unavailable: "No worker with the image role took the request in time, the image server is down, or Redis is.",
});

const UPLOAD_ERRORS =
  "The file is missing, not an image, truncated or of an unsupported format (PNG, JPEG, WebP, GIF, TIFF, HEIF/AVIF); " +
  "the request is not multipart/form-data. An image file over `HEARTH_MAX_IMAGE_BYTES`, or declaring more pixels than " +
  "`HEARTH_MAX_IMAGE_PIXELS`, is a 413.";

export const textToImageRoute = contractRoute({
  method: "post",
  path: "/v1/image_generation/accounts/{account_id}/models/{model_id}",
  operationId: "textToImage",
  scope: "inference",
  summary: "Generate images from a prompt",
  tag,
  request: { params: modelParams, body: { required: true, content: jsonContent(textToImageBody) } },
  responses: answers,
  errors: errors(""),
});

export const imageToImageRoute = contractRoute({
  method: "post",
  path: "/v1/image_generation/accounts/{account_id}/models/{model_id}/image_to_image",
  operationId: "imageToImage",
  scope: "inference",
  summary: "Generate images from a prompt and a start image",
  tag,
  request: {
    params: modelParams,
    body: { required: true, content: { "multipart/form-data": { schema: imageToImageForm } } },
  },
  responses: answers,
  errors: errors(UPLOAD_ERRORS),
});

export const controlNetRoute = contractRoute({
  method: "post",
  path: "/v1/image_generation/accounts/{account_id}/models/{model_id}/control_net",
  operationId: "controlNet",
  scope: "inference",
  summary: "Generate images whose structure follows a control image",
  tag,
  request: {
    params: modelParams,
    body: { required: true, content: { "multipart/form-data": { schema: controlNetForm } } },
  },
  responses: answers,
  errors: errors(`${UPLOAD_ERRORS} An unknown control_net_name is a 400 listing the supported ones.`),
});

export const openAiImagesRoute = contractRoute({
  method: "post",
  path: "/v1/images/generations",
  operationId: "createImage",
  scope: "inference",
  summary: "Generate images from a prompt (OpenAI's images API)",
  description:
    "What `client.images.generate` of the OpenAI SDKs sends, served by an image model named in `model`; " +
    "the images come back as base64 PNG (`b64_json`).",
  tag,
  request: { body: { required: true, content: jsonContent(openAiImageRequestSchema) } },
  responses: { 200: { description: "The images.", content: jsonContent(openAiImagesSchema) } },
  errors: errors(
    'response_format "url", and quality, style, background, moderation, output_compression, partial_images ' +
      "or stream set, are refused by name; n over 4; size not <width>x<height>.",
  ),
});
