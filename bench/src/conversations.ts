import { seededRandom } from "../../src/images/seeded-random.js";
import type { BenchHttp, StreamRoute, StreamTiming } from "./http-client.js";

/**
 * Conversations for the prompt-caching scenario: a system prompt and a user turn, sent as a
 * chat completion when the model has a chat template, else as a completion of the same text.
 * Text is prose of common words drawn from a seeded generator, so that a run is repeatable
 * and a longer text begins with the shorter one of the same seed.
 */

export interface Conversation {
  system: string;
  user: string;
}

const WORDS = (
  "the of and to in is that for it as was with be by on not this are or from at which but have an " +
  "they you were her she there would their we him been has when who will more no if out so said what " +
  "up its about into than them can only other new some could time these two may then do first any my " +
  "now such like our over man me even most made after also did many before must through back years " +
  "where much your way well down should because each just those people how too little state good very " +
  "make world still own see men work long get here between both life being under never day same " +
  "another know while last might us great old year off come since against go came right used take three"
).split(" ");

/** `words` words of prose from `seed`: the same seed gives the same words, a longer text extending a shorter one. */
export function prose(words: number, seed: number): string {
  const random = seededRandom(seed);
  return Array.from({ length: words }, (_, i) => {
    const word = WORDS[Math.floor(random() * WORDS.length)]!;
    return (i + 1) % 12 === 0 ? `${word}.` : word;
  }).join(" ");
}

/** 16 hex digits from `seed`, which no other seed gives in practice: put first, they make a prompt share nothing. */
export function nonce(seed: number): string {
  const random = seededRandom(seed);
  return Array.from({ length: 4 }, () =>
    Math.floor(random() * 0x10000)
      .toString(16)
      .padStart(4, "0"),
  ).join("");
}

/** Sends conversations to one model, greedy, streamed (time to first token, usage with cached tokens). */
export class ConversationClient {
  constructor(
    private readonly http: BenchHttp,
    private readonly model: string,
    /** Chat completions (the model has a chat template), else completions of "system\n\nuser". */
    readonly chat: boolean,
  ) {}

  send(conversation: Conversation, maxTokens: number): Promise<StreamTiming> {
    const common = { model: this.model, max_tokens: maxTokens, temperature: 0 };
    const route: StreamRoute = this.chat ? "/v1/chat/completions" : "/v1/completions";
    const body = this.chat
      ? {
          ...common,
          messages: [
            { role: "system", content: conversation.system },
            { role: "user", content: conversation.user },
          ],
        }
      : { ...common, prompt: `${conversation.system}\n\n${conversation.user}` };
    return this.http.stream(body, route);
  }
}

/** A conversation's system prompt as is ("shared"), or after a nonce that makes it share nothing ("unique"). */
export type Sharing = "shared" | "unique";

/** Conversation `i` of a round (`label` tells rounds apart, in the nonce and in the user turn). */
export function conversationOf(system: string, sharing: Sharing, label: string, i: number): Conversation {
  const seed = [...label].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0), 7) + i;
  return {
    system: sharing === "shared" ? system : `${nonce(seed)} ${system}`,
    user: `Question ${label}.${i + 1}: which word comes first in the notes above?`,
  };
}

/**
 * Words of prose (from `seed`) that make a system prompt of about `tokens` tokens, from the prompt
 * tokens the API counts for the same conversation with an empty system prompt, with a nonce only,
 * and with the nonce and the prose's first words: the tokenizer may be byte-level or not, nothing
 * is assumed. The nonce keeps those words' cells from serving the system prompt later.
 */
export async function sizeSystemPrompt(client: ConversationClient, tokens: number, seed: number) {
  const sample = Math.max(8, Math.floor(tokens / 8));
  const mark = nonce(seed);
  const promptTokens = async (system: string) =>
    (await client.send(conversationOf(system, "shared", "0", 0), 1)).promptTokens;
  const emptyPromptTokens = await promptTokens("");
  const marked = await promptTokens(mark);
  const tokensPerWord = ((await promptTokens(`${mark} ${prose(sample, seed)}`)) - marked) / sample;
  return { words: Math.max(1, Math.round(tokens / tokensPerWord)), emptyPromptTokens, tokensPerWord };
}
