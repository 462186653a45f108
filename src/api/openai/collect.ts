import type { TokenLogprob } from "../../domain/logprobs.js";
import type { FinishReason, StreamEvent, Usage } from "../../requests/stream.js";
import type { PublicFinishReason, UsageBody } from "../contract/openai/responses.js";

/** A tool call as collected from its events. */
export interface CollectedCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Collected {
  texts: string[];
  /** Each choice's token logprobs, when the request asked for them. */
  logprobs: TokenLogprob[][];
  /** Each choice's tool calls, in order (empty when it made none). */
  toolCalls: CollectedCall[][];
  finishReasons: PublicFinishReason[];
  usage: Usage;
  embeddings: number[][];
}

/** Reads a request's events to the end: the non-streaming path of the same contract. */
export async function collect(events: AsyncIterable<StreamEvent>, choices: number): Promise<Collected> {
  const texts = Array.from({ length: choices }, () => "");
  const logprobs = Array.from({ length: choices }, (): TokenLogprob[] => []);
  const toolCalls = Array.from({ length: choices }, (): CollectedCall[] => []);
  const out: Collected = {
    texts,
    logprobs,
    toolCalls,
    finishReasons: [],
    usage: { promptTokens: 0, completionTokens: 0 },
    embeddings: [],
  };
  for await (const event of events) {
    if (event.type === "token") {
      texts[event.index] += event.text;
      if (event.logprobs) logprobs[event.index]?.push(...event.logprobs);
    } else if (event.type === "tool_call")
      toolCalls[event.index]![event.call] = { id: event.callId, name: event.name, arguments: "" };
    else if (event.type === "tool_arguments") toolCalls[event.index]![event.call]!.arguments += event.text;
    else if (event.type === "embeddings") out.embeddings.splice(event.start, event.vectors.length, ...event.vectors);
    else if (event.type === "done") {
      out.finishReasons = event.choices.map((c) => publicFinishReason(c.finishReason));
      out.usage = event.usage;
    }
  }
  return out;
}

/** "cancelled" only happens when nobody is listening any more. */
export function publicFinishReason(reason: FinishReason): PublicFinishReason {
  return reason === "cancelled" ? "stop" : reason;
}

export function usageBody(usage: Usage): UsageBody {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
  };
}

/** OpenAI's `created`: seconds since the epoch. */
export const unixNow = () => Math.floor(Date.now() / 1000);
