import type { BatchItem, LlamaContext, LlamaContextSequence } from "node-llama-cpp";

/**
 * Sequence IDs: what llama.cpp's batches are made of, and what decides how many passes a decode
 * takes. node-llama-cpp gives each sequence a KV cache of its own (its contexts are not
 * "unified"), and llama.cpp then decodes a batch in one pass only over sequences whose IDs follow
 * each other (0, 1, 2 …) in the order the batch holds them: wherever the next ID in that order is
 * not one more than the last, it starts another pass (`split_equal` with `sequential` in
 * llama-batch.cpp), and each pass reads all the weights again. 16 sequences in the order their
 * decodes were queued took 13–16 passes a step, and a step 2.7 × as long as in ID order (135M
 * shape, 1 thread; docs/performance.md).
 */

/** node-llama-cpp's internal ID of a sequence in its context (what its native batch calls take). */
export function sequenceIdOf(sequence: LlamaContextSequence): number {
  const id = (sequence as unknown as { _sequenceId?: unknown })._sequenceId;
  if (typeof id !== "number") {
    throw new Error("node-llama-cpp's sequence has no _sequenceId: sequenceIdOf needs updating for this version");
  }
  return id;
}

/**
 * The sequence ID of each batch item a context's batch strategy is given, by position.
 * node-llama-cpp calls the strategy with its internal `_queuedDecodes` in order, one item each,
 * and each of those names its sequence; checked here, so that a version that changes it fails
 * loudly (the engine tests run on it) rather than batching the wrong sequences.
 */
export function queuedSequenceIds(context: LlamaContext | undefined, items: readonly BatchItem[]): number[] {
  const queued = (context as unknown as { _queuedDecodes?: { sequenceId?: unknown; tokens?: unknown }[] } | undefined)
    ?._queuedDecodes;
  if (
    !queued ||
    queued.length !== items.length ||
    items.some((item, i) => typeof queued[i]?.sequenceId !== "number" || queued[i]!.tokens !== item.tokens)
  ) {
    throw new Error(
      "node-llama-cpp's queued decodes do not match the batch items: queuedSequenceIds needs updating for this version",
    );
  }
  return queued.map((decode) => decode.sequenceId as number);
}

/**
 * Sequence IDs for the batch strategy of a context not made yet (the strategy goes into its
 * options): `ids` reads them once decodes are queued, by then from the context given to `attach`.
 */
export function contextToBeIds(): {
  ids: (items: readonly BatchItem[]) => number[];
  attach: (context: LlamaContext) => void;
} {
  let made: LlamaContext | undefined;
  return {
    ids: (items) => queuedSequenceIds(made, items),
    attach: (context) => {
      made = context;
    },
  };
}

/**
 * How many passes llama.cpp makes over a generation step (one token per sequence) whose
 * sequences the batch holds in `order`: each pass starts at the first sequence not yet decoded
 * and takes, reading on through the batch, each one whose ID is one more than the last taken
 * (llama-batch.cpp's `split_equal`). In ID order, one pass for each run of consecutive IDs.
 */
export function stepPasses(order: readonly number[]): number {
  const done = new Array<boolean>(order.length).fill(false);
  let passes = 0;
  for (let start = 0; start < order.length; start++) {
    if (done[start]) continue;
    passes++;
    let last = order[start]!;
    done[start] = true;
    for (let i = start + 1; i < order.length; i++) {
      if (!done[i] && order[i] === last + 1) {
        last = order[i]!;
        done[i] = true;
      }
    }
  }
  return passes;
}
