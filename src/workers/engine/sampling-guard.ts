import type { LlamaContext } from "node-llama-cpp";

interface NativeContext {
  sampleToken(...args: unknown[]): Promise<unknown>;
}

/** What node-llama-cpp's native sampleToken answers when it has no token to give ("Failed to sample next token"). */
const NO_TOKEN = -1;

/** The native error of each context's last failed sampling, until a request takes it. */
const failures = new WeakMap<LlamaContext, unknown>();

/**
 * Makes a context sample one token at a time, and a failed sampling end only its own sequence.
 *
 * node-llama-cpp samples the sequences of a batch concurrently, on libuv's thread pool. In
 * llama.cpp 0.4.0 the first read of a context's outputs after a decode reorders them in place
 * (`output_reorder`, called by every `llama_get_logits_ith`; outputs come out of order when a
 * batch's sequences are not in their IDs' order, as when they queue their tokens in the order
 * their samplings finish), so two first reads at once swap rows under each other: 18–38 of 72
 * concurrent greedy generations of a 49k vocabulary came out unlike the same prompts alone (the
 * test). Letting only the first sampling after each decode go alone, and the rest of the step
 * together, was correct but slower than one at a time everywhere measured: at 16 sequences
 * 3,272 against 4,559 tok/s on 2 cores (hearth-tiny), 346 against 901 on an H100 (a 49k
 * vocabulary; 436 against 1,580 at 64), so samplings go in turn.
 *
 * A native sampling can fail (llama.cpp's grammar refusing, once sampled, a token it had let
 * through: grammar-token-bans.ts). node-llama-cpp awaits samplings inside its batch loop, which
 * nothing awaits: the rejection would go unhandled and end the process, and the sequence's
 * decode would never settle. So a failure answers what the native call answers when it has no
 * token, which node-llama-cpp throws inside that sequence's generator ("Failed to sample next
 * token"), where its request's `for await` sees it; the other sequences of the batch go on.
 * The native error is kept for the request (`takeSamplingFailure`).
 *
 * This wraps node-llama-cpp's internal native context (`_ctx`); the tests that run many
 * sequences together (sampling-guard.test.ts, llama-engine.test.ts) and the sampling-failure
 * test catch a version where it stops working.
 */
export function guardSampling(context: LlamaContext): void {
  const native = (context as unknown as { _ctx?: Partial<NativeContext> })._ctx;
  if (typeof native?.sampleToken !== "function") {
    throw new Error(
      "node-llama-cpp's context has no native sampleToken: guardSampling needs updating for this version",
    );
  }
  const sample = native.sampleToken.bind(native);
  const contained = (args: unknown[]) =>
    sample(...args).catch((error: unknown) => {
      failures.set(context, error);
      return NO_TOKEN;
    });
  let pending = 0;
  let tail: Promise<unknown> = Promise.resolve();
  // The native addon's methods (llama.cpp's binding) are read-only on its prototype: shadow this one on the instance.
  Object.defineProperty(native, "sampleToken", {
    configurable: true,
    value: (...args: unknown[]) => {
      // Alone (one sequence generating), a sample goes at once; otherwise after the last one.
      const next = pending === 0 ? contained(args) : tail.then(() => contained(args));
      pending++;
      tail = next.then(() => {
        pending--;
      });
      return next;
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
