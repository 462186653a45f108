import { gpt2ByteChars } from "../../src/models/formats/gpt2-bytes.js";
import { hearthDemoTables } from "../../src/models/factory/hearth-demo.js";
import { argmax } from "../../src/models/factory/word-ngram.js";
import { encodeWords } from "../../src/models/factory/word-vocab.js";
import { defaultChatStops, renderDefaultChat } from "../../src/workers/engine/default-chat-template.js";

/**
 * What hearth-demo says greedily, without llama.cpp: the prompt's tokens (its BPE), their word
 * classes, then the n-gram's most likely word, again and again. The transformer's first
 * positions look back at the first token (its attention has nothing earlier to see), so the
 * history starts with the first word repeated. The n-gram keeps every row's winner a margin
 * ahead, so this is exact, not approximate.
 */

const byteOf = new Map(gpt2ByteChars.map((c, b) => [c, b]));

export function demoTokens(text: string): number[] {
  return encodeWords(hearthDemoTables().vocab, text);
}

export function demoDetokenize(tokens: readonly number[]): string {
  const { vocab } = hearthDemoTables();
  const bytes = tokens.flatMap((t) => [...vocab.tokens[t]!].map((c) => byteOf.get(c)!));
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

export function demoGreedyTokens(promptTokens: readonly number[], maxTokens: number): number[] {
  const { ngram } = hearthDemoTables();
  const history = promptTokens.map((t) => ngram.classOf[t]!);
  if (history.length === 0) throw new Error("hearth-demo's oracle needs a prompt");
  while (history.length < ngram.order - 1) history.unshift(history[0]!);
  const out: number[] = [];
  while (out.length < maxTokens) {
    const next = argmax(ngram.row(history));
    history.push(next);
    out.push(ngram.wordTokens[next]!);
  }
  return out;
}

/** hearth-demo's greedy completion of a prompt. */
export function demoGreedyText(prompt: string, maxTokens: number): string {
  return demoDetokenize(demoGreedyTokens(demoTokens(prompt), maxTokens));
}

/** hearth-demo's greedy answer to one user message, through Hearth's default chat template (up to its stop strings). */
export function demoGreedyChat(content: string, maxTokens: number): string {
  const text = demoGreedyText(renderDefaultChat([{ role: "user", content }]), maxTokens);
  const stop = defaultChatStops.map((s) => text.indexOf(s)).filter((i) => i >= 0);
  return stop.length > 0 ? text.slice(0, Math.min(...stop)) : text;
}
