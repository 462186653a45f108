import { MODEL_ID_PATTERN } from "../domain/vocabulary.js";

/**
 * The image models an operator serves (HEARTH_IMAGE_MODELS): `id=backend` pairs, comma
 * separated. A backend is `sketch` (the embedded renderer) or `a1111:<url>` (a server
 * speaking the AUTOMATIC1111 web API, e.g. a1111:http://gpu-box:7860).
 */
export type ImageBackendSpec = { kind: "sketch" } | { kind: "a1111"; url: string };

export interface ImageModelSpec {
  id: string;
  backend: ImageBackendSpec;
}

/** Parses the variable's text; throws an Error saying what is wrong (config lists it). */
export function parseImageModels(text: string): ImageModelSpec[] {
  const specs = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry): ImageModelSpec => {
      const at = entry.indexOf("=");
      const id = at < 0 ? "" : entry.slice(0, at).trim();
      const backend = at < 0 ? "" : entry.slice(at + 1).trim();
      if (!MODEL_ID_PATTERN.test(id))
        throw new Error(`"${entry}" must be <model id>=<backend>, e.g. hearth-sketch=sketch`);
      if (backend === "sketch") return { id, backend: { kind: "sketch" } };
      if (backend.startsWith("a1111:")) {
        const url = backend.slice("a1111:".length);
        if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
          throw new Error(`"${entry}": a1111: takes an http(s) URL, e.g. a1111:http://gpu-box:7860`);
        }
        return { id, backend: { kind: "a1111", url } };
      }
      throw new Error(`"${entry}": the backends are sketch and a1111:<url>`);
    });
  const ids = specs.map((s) => s.id);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw new Error(`the image model ${twice} is named twice`);
  return specs;
}
