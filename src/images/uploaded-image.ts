import { AppError } from "../errors.js";

/**
 * The image files a request may bring (init_image, control_image), by sharp's format names,
 * and the 400s for one Hearth will not or cannot read. SVG is not among them: it would run
 * librsvg on user input. The decoder's own words (libvips' "VipsJpeg: ...", "Input buffer
 * contains unsupported image format") go to the logs as the error's detail, never to the
 * client: they name the library and its version's parser, and help nobody fix the request.
 */
export const UPLOAD_FORMATS: readonly string[] = ["png", "jpeg", "webp", "gif", "tiff", "heif"];

const FORMAT_NAMES = "PNG, JPEG, WebP, GIF, TIFF or HEIF/AVIF";

/** An uploaded image that sharp cannot read (not an image, truncated, corrupt): a 400 naming the field. */
export function unreadableImage(param: string, cause: unknown): AppError {
  return new AppError(
    "invalid_request",
    `${param} could not be read: it is not a ${FORMAT_NAMES} image, or it is damaged.`,
    { param, cause, detail: `sharp: ${cause instanceof Error ? cause.message : String(cause)}` },
  );
}

/** An uploaded image sharp reads but Hearth does not take (SVG, PDF, an empty image). */
export function unsupportedImage(param: string, format: string | undefined): AppError {
  const what = format ? format.toUpperCase() : "of no known format";
  return new AppError("invalid_request", `${param} is ${what}; send a ${FORMAT_NAMES} image.`, { param });
}
