import { createHash } from "node:crypto";
import type { InferencePayload } from "./jobs.js";

/**
 * A request's prefix key: a hash of the first block of its prompt, as the request states it
 * (before any template renders it), with the model and the adapter that compute its cells.
 * Two requests with one key begin their prompts the same way, so a worker that ran one likely
 * holds the other's first cells in its prompt cache (workers/engine/prompt-cache.ts): workers
 * list the keys they ran last in their heartbeats, and placement sends a request to a worker
 * that lists its key (requests/placement.ts). The API and the workers compute it from
 * the job's payload alike, so it needs no field of its own.
 *
 * Prompts shorter than a block have none: evaluating them again costs little, and a key for
 * every short chat would crowd the heartbeats.
 */

/** Characters of a text prompt, or of a chat's messages, that make the block. */
export const PREFIX_BLOCK_CHARS = 1024;
/** Token IDs of a tokenized prompt that make the block (about as many tokens as the characters above). */
export const PREFIX_BLOCK_TOKENS = 256;

export function promptPrefixKey(payload: InferencePayload): string | undefined {
  const block = firstBlock(payload);
  if (block === undefined) return undefined;
  const { baseModelId, adapter, chatTemplate } = payload.model;
  // The parts are joined by NUL, which none of the IDs holds, so that no two sets of parts make one text.
  const parts = [payload.kind, baseModelId, adapter?.key ?? "", chatTemplate ?? "", block];
  return createHash("sha256").update(parts.join("\0")).digest("hex").slice(0, 16);
}

function firstBlock(payload: InferencePayload): string | undefined {
  switch (payload.kind) {
    case "completion": {
      const prompt = payload.prompts[0]!;
      if (typeof prompt === "string")
        return prompt.length >= PREFIX_BLOCK_CHARS ? prompt.slice(0, PREFIX_BLOCK_CHARS) : undefined;
      return prompt.length >= PREFIX_BLOCK_TOKENS ? prompt.slice(0, PREFIX_BLOCK_TOKENS).join(",") : undefined;
    }
    case "chat": {
      // Tools are written into the prompt ahead of the conversation by the templates that take them.
      let text = payload.tools ? `${JSON.stringify(payload.tools.tools)}\0` : "";
      for (const message of payload.messages) {
        text += `${message.role}\0${message.content}\0`;
        if (text.length >= PREFIX_BLOCK_CHARS) return text.slice(0, PREFIX_BLOCK_CHARS);
      }
      return undefined;
    }
    case "embedding":
      return undefined;
  }
}
