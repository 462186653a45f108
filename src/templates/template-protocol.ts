/**
 * What the API and the worker send the template sandbox's threads, and what comes back
 * (template-sandbox.ts sends, template-thread.ts answers). Plain data: it crosses threads.
 */

export interface TemplateTurn {
  role: "system" | "user" | "assistant";
  content: string;
}

/** node-llama-cpp's LlamaText as JSON: plain text and special-token pieces, in order. */
export type TemplateTextJSON = (string | { type: "specialToken" | "specialTokensText"; value: string })[];

export interface RenderRequest {
  id: number;
  template: string;
  messages: readonly TemplateTurn[];
  /** The most characters the rendered prompt may have. */
  maxChars: number;
}

export type RenderReply =
  | { id: number; ok: true; text: TemplateTextJSON; stops: TemplateTextJSON[] }
  /** `kind: "template"`: the template itself failed (a syntax error, raise_exception); `"bounds"`: too big. */
  | { id: number; ok: false; kind: "template" | "bounds"; message: string };

/**
 * A LlamaText's JSON as the protocol carries it: always a list. node-llama-cpp writes a text of
 * one plain piece as that string alone (and an empty one as ""), which a plain template renders.
 */
export function textPieces(json: string | TemplateTextJSON): TemplateTextJSON {
  if (typeof json !== "string") return json;
  return json === "" ? [] : [json];
}

/** The characters of a rendered text, special-token pieces included. */
export function textLength(text: TemplateTextJSON): number {
  let length = 0;
  for (const piece of text) length += typeof piece === "string" ? piece.length : piece.value.length;
  return length;
}

/** The plain text of a rendered text, special-token pieces included as written. */
export function plainText(text: TemplateTextJSON): string {
  return text.map((piece) => (typeof piece === "string" ? piece : piece.value)).join("");
}
