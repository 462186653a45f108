import type { LlamaContext } from "node-llama-cpp";

interface NativeContext {
  sampleToken(...args: unknown[]): Promise<unknown>;
  decodeBatch(): Promise<unknown>;
}

/** What node-llama-cpp's native sampleToken answers when it has no token to give ("Failed to sample next token"). */
const NO_TOKEN = -1;

/** The native error of each context's last failed sampling, until a request takes it. */
const failures = new WeakMap<LlamaContext, unknown>();

/**
 * Makes a context's samplings safe to run together, and a failed sampling end only its own
 * sequence.
 *
 * node-llama-cpp samples the sequences of a batch concurrently, on libuv's thread pool. In
 * llama.cpp 0.4.0 the first read of a context's outputs after a decode reorders them in place
 * (`output_reorder`, called by every `llama_get_logits_ith`; outputs come out of order when a
 * batch's sequences are not in their IDs' order, as when they queue their tokens in the order
 * their samplings finish), so two first reads at once swap rows under each other: 18–38 of 72
 * concurrent greedy generations of a 49k vocabulary came out unlike the same prompts alone (the
 * test). Once reordered, the outputs are only read until the next decode. So the first sampling
 * after each decode goes alone, and the others of that step wait for it, then run `width` at a
 * time.
 *
 * How many at a time is the machine's (`samplingWidth`): on 2 cores, in turn was faster than
 * together (16 sequences: 4,559 against 3,272 tok/s on hearth-tiny, 1,411 against 841 with a 49k
 * vocabulary; the pool's threads fight for the cores), while where the decode is short (a GPU)
 * a step's samplings in turn take longer than its decode (docs/performance.md).
 *
 * A native sampling can fail (llama.cpp's grammar refusing, once sampled, a token it had let
 * through: grammar-token-bans.ts). node-llama-cpp awaits samplings inside its batch loop, which
 * nothing awaits: the rejection would go unhandled and end the process, and the sequence's
 * decode would never settle. So a failure answers what the native call answers when it has no
 * token, which node-llama-cpp throws inside that sequence's generator ("Failed to sample next
 * token"), where its request's `for await` sees it; the other sequences of the batch go on.
 * The native error is kept for the request (`takeSamplingFailure`).
 *
 * node-llama-cpp never samples while it decodes (its batch loop awaits a step's samplings
 * before the next decode), which this relies on. It wraps node-llama-cpp's internal native
 * context (`_ctx`); the test that runs many sequences against the oracle (llama-engine.test.ts)
 * and the sampling-failure test catch a version where it stops working.
 */
export function guardSampling(context: LlamaContext, width = 1): void {
  const native = (context as unknown as { _ctx?: Partial<NativeContext> })._ctx;
  if (typeof native?.sampleToken !== "function" || typeof native.decodeBatch !== "function") {
    throw new Error(
      "node-llama-cpp's context has no native sampleToken or decodeBatch: guardSampling needs updating for this version",
    );
  }
  const sample = native.sampleToken.bind(native);
  const decodeBatch = native.decodeBatch.bind(native);
  const contained = (args: unknown[]) =>
    sample(...args).catch((error: unknown) => {
      failures.set(context, error);
      return NO_TOKEN;
    });
  /** Settled once the first sampling since the last decode has read the outputs (they are in order then). */
  let reordered: Promise<void> | undefined;
  let running = 0;
  const queued: (() => void)[] = [];
  const run = (args: unknown[]) => {
    running++;
    return contained(args).finally(() => {
      running--;
      queued.shift()?.();
    });
  };
  /** A sampling once the outputs are in order: at once while fewer than `width` run, else in turn. */
  const ordered = (args: unknown[]) =>
    running < width ? run(args) : new Promise<void>((go) => queued.push(go)).then(() => run(args));
  // The native addon's methods (llama.cpp's binding) are read-only on its prototype: shadow them on the instance.
  Object.defineProperty(native, "decodeBatch", {
    configurable: true,
    value: () => {
      reordered = undefined;
      return decodeBatch();
    },
  });
  Object.defineProperty(native, "sampleToken", {
    configurable: true,
    value: (...args: unknown[]) => {
      if (reordered) return reordered.then(() => ordered(args));
      const first = run(args);
      reordered = first.then(() => {});
      return first;
    },
  });
}

/**
 * The native error of the context's last failed sampling, once: that of the request that asks
 * right after its generation failed, unless another sequence's sampling failed in between.
 */
export function takeSamplingFailure(context: LlamaContext): unknown {
  const failure = failures.get(context);
  failures.delete(context);
  return failure;
}

/**
 * Samplings of one step that run at once: one per core beyond the first (the process's own),
 * at most libuv's default pool of 4 threads.
 */
export function samplingWidth(cores: number): number {
  return Math.max(1, Math.min(4, cores - 1));
}
