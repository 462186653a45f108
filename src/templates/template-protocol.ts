/**
 * What the API and the worker send the template sandbox's threads, and what comes back
 * (template-sandbox.ts sends, template-thread.ts answers). Plain data: it crosses threads.
 */

import type { ChatMessage as TemplateTurn, ToolFunction } from "../domain/generation.js";

export type { TemplateTurn };

/** node-llama-cpp's LlamaText as JSON: plain text and special-token pieces, in order. */
export type TemplateTextJSON = (string | { type: "specialToken" | "specialTokensText"; value: string })[];

export interface RenderRequest {
  id: number;
  template: string;
  messages: readonly TemplateTurn[];
  /** The functions the model may call, rendered as the template renders tools. */
  tools?: readonly ToolFunction[];
  /** The most characters the rendered prompt may have. */
  maxChars: number;
}

export type RenderReply =
  | { id: number; ok: true; text: TemplateTextJSON; stops: TemplateTextJSON[]; toolCallFormat?: ToolCallFormat }
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

/**
 * How a template writes a tool call, as node-llama-cpp's chat wrappers state it: `prefix`, the
 * function's name, `paramsPrefix`, the arguments' JSON, `suffix`; calls of one answer joined by
 * `between`. `trigger` is where a call starts (the prefix's leading special token, else the
 * whole prefix): once the model writes it, the rest of the call is generated under a grammar.
 */
export interface ToolCallFormat {
  trigger: string;
  prefix: string;
  paramsPrefix: string;
  suffix: string;
  between: string;
}
