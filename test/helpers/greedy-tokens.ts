import type { LlamaContext, LlamaModel } from "node-llama-cpp";

/** Greedy generation through node-llama-cpp's low-level sequence API alone (no Hearth code), `count` tokens. */
export async function greedyTokens(
  model: LlamaModel,
  context: LlamaContext,
  prompt: string,
  count: number,
): Promise<number[]> {
  const sequence = context.getSequence();
  try {
    const out: number[] = [];
    for await (const token of sequence.evaluate(model.tokenize(prompt), { temperature: 0 })) {
      out.push(token);
      if (out.length >= count) break;
    }
    return out;
  } finally {
    await sequence.dispose();
  }
}
