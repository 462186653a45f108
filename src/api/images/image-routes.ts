import type { Context, Hono } from "hono";
import sharp from "sharp";
import { AppError } from "../../errors.js";
import { clientGone, type AppDeps, type AppEnv } from "../app-env.js";
import {
  controlNetForm,
  imageToImageForm,
  textToImageBody,
  type TextToImageBody,
} from "../contract/images/requests.js";
import type { OpenAiImages } from "../contract/images/openai-images.js";
import {
  controlNetRoute,
  imageToImageRoute,
  openAiImagesRoute,
  textToImageRoute,
  type GeneratedImages,
} from "../contract/images/routes.js";
import { parseForm } from "../middleware/parse-body.js";
import { admitGeneration } from "../admit-generation.js";
import { REQUEST_ID_HEADER } from "../request-id.js";
import { mountRoute } from "../mount-route.js";
import type { ImageAsk, ImageRunEvent } from "../services/image-generation.js";
import { imageSse } from "./image-sse.js";

type Answer = "json" | "png" | "jpeg" | "events";

/**
 * Text-to-image, image-to-image and control-net, each naming its image model in the path; and
 * OpenAI's images API, naming it in `model`.
 */
export function imageRoutes(app: Hono<AppEnv>, deps: AppDeps) {
  const answer = (c: Context<AppEnv>, params: { account_id: string; model_id: string }, ask: ImageAsk) =>
    respond(c, deps, `accounts/${params.account_id}/models/${params.model_id}`, ask);

  mountRoute(app, textToImageRoute, (c, { body, params }) => answer(c, params, textFields(body)));

  mountRoute(app, openAiImagesRoute, async (c, { body }) => {
    const [width, height] = body.size ?? [];
    const ask: ImageAsk = {
      prompt: body.prompt,
      width,
      height,
      cfgScale: textToImageBody.shape.cfg_scale.parse(undefined),
      steps: textToImageBody.shape.steps.parse(undefined),
      seed: 0,
      samples: body.n ?? 1,
    };
    const abort = clientGone(c.req.raw);
    const events = deps.images.run(c.get("caller").accountId, body.model, ask, abort.signal, (requestId) =>
      admitImage(c, deps, requestId, body.model),
    );
    // The model's own size bounds name width or height; this request says size.
    const result = await lastResult(events).catch((error: unknown) => {
      if (!(error instanceof AppError) || (error.param !== "width" && error.param !== "height")) throw error;
      throw new AppError(error.code, error.message, { param: "size", cause: error });
    });
    const reply: OpenAiImages = {
      created: Math.floor(Date.now() / 1000),
      data: result.images.map((image) => ({ b64_json: image.png.toString("base64") })),
    };
    return c.json(reply, 200);
  });

  mountRoute(app, imageToImageRoute, async (c, { params }) => {
    const { fields, files } = await parseForm(c, imageToImageForm);
    // STEP_SCHEDULE: starting later in the schedule keeps more of the init image.
    const keep = fields.init_image_mode === "STEP_SCHEDULE" ? fields.step_schedule_start : fields.image_strength;
    return answer(c, params, {
      ...textFields(fields),
      init: { file: requiredFile(files, "init_image"), strength: 1 - keep },
    });
  });

  mountRoute(app, controlNetRoute, async (c, { params }) => {
    const { fields, files } = await parseForm(c, controlNetForm);
    return answer(c, params, {
      ...textFields(fields),
      control: {
        file: requiredFile(files, "control_image"),
        name: fields.control_net_name,
        scale: fields.conditioning_scale,
      },
    });
  });
}

function textFields(body: TextToImageBody): ImageAsk {
  return {
    prompt: body.prompt,
    negativePrompt: body.negative_prompt,
    width: body.width,
    height: body.height,
    cfgScale: body.cfg_scale,
    steps: body.steps,
    seed: body.seed,
    samples: body.samples,
    sampler: body.sampler,
  };
}

function requiredFile(files: Map<string, Blob>, name: string): Blob {
  const file = files.get(name);
  if (!file || file.size === 0) {
    throw new AppError("invalid_request", `${name} is required: the image, as a file field of the multipart form.`, {
      param: name,
    });
  }
  return file;
}

/** Accept decides the answer: events, an image's bytes, or (the default) JSON. */
function answerKind(accept: string): Answer {
  if (accept.includes("text/event-stream")) return "events";
  if (accept.includes("image/png")) return "png";
  if (accept.includes("image/jpeg")) return "jpeg";
  return "json";
}

async function respond(c: Context<AppEnv>, deps: AppDeps, name: string, ask: ImageAsk): Promise<Response> {
  const kind = answerKind(c.req.header("accept") ?? "");
  if ((kind === "png" || kind === "jpeg") && ask.samples !== 1) {
    throw new AppError(
      "invalid_request",
      `samples is ${ask.samples}, but an image/${kind} answer holds one image; ask for samples 1, or Accept: application/json.`,
      { param: "samples" },
    );
  }
  const abort = clientGone(c.req.raw);
  const events = deps.images.run(c.get("caller").accountId, name, ask, abort.signal, (requestId) =>
    admitImage(c, deps, requestId, name),
  );
  if (kind === "events") return imageSse(events, toJson, () => abort.abort());
  const result = await lastResult(events);
  if (kind === "json") return c.json(toJson(result));
  const [image] = result.images;
  const bytes = kind === "png" ? image!.png : await sharp(image!.png).jpeg({ quality: 90 }).toBuffer();
  return new Response(new Uint8Array(bytes), {
    headers: {
      "content-type": `image/${kind}`,
      seed: String(image!.seed),
      "finish-reason": image!.finishReason,
    },
  });
}

/** An image request's admission; its answer names its request ID, as the text endpoints' do (usage records are by it). */
function admitImage(c: Context<AppEnv>, deps: AppDeps, requestId: string, model: string) {
  c.header(REQUEST_ID_HEADER, requestId);
  return admitGeneration(c, deps, { requestId, model, estimatedTokens: 0 });
}

async function lastResult(events: AsyncGenerator<ImageRunEvent>): Promise<Extract<ImageRunEvent, { type: "result" }>> {
  for await (const event of events) if (event.type === "result") return event;
  throw new AppError("unavailable", "The image request ended without images; please retry.");
}

function toJson(result: Extract<ImageRunEvent, { type: "result" }>): GeneratedImages {
  return result.images.map((i) => ({ base64: i.png.toString("base64"), finishReason: i.finishReason, seed: i.seed }));
}
