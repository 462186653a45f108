import type { LlamaContext } from "node-llama-cpp";

interface NativeContext {
  sampleToken(...args: unknown[]): Promise<unknown>;
}

/**
 * Makes a context sample one token at a time. node-llama-cpp samples the sequences of a
 * batch concurrently, on libuv's thread pool, and with llama.cpp 0.4.0 two samplings on
 * one context at once can read each other's logits: with 20 sequences generating
 * together, 57 of 400 greedy generations of hearth-tiny came out wrong, and none with
 * the thread pool at 2 threads (one decoding, one sampling). Sampling a token is short
 * next to decoding the batch, so doing them in turn costs little.
 *
 * This wraps node-llama-cpp's internal native context (`_ctx`); the test that runs many
 * sequences against the oracle (llama-engine.test.ts) catches a version where it stops
 * working.
 */
export function serializeSampling(context: LlamaContext): void {
  const native = (context as unknown as { _ctx?: NativeContext })._ctx;
  if (typeof native?.sampleToken !== "function") {
    throw new Error(
      "node-llama-cpp's context has no native sampleToken: serializeSampling needs updating for this version",
    );
  }
  const sample = native.sampleToken.bind(native);
  let pending = 0;
  let tail: Promise<unknown> = Promise.resolve();
  // The native addon's methods (llama.cpp's binding) are read-only on its prototype: shadow this one on the instance.
  Object.defineProperty(native, "sampleToken", {
    configurable: true,
    value: (...args: unknown[]) => {
      // Alone (one sequence generating), a sample goes at once; otherwise after the last one.
      const next = pending === 0 ? sample(...args) : tail.then(() => sample(...args));
      pending++;
      const settled = () => {
        pending--;
      };
      tail = next.then(settled, settled);
      return next;
    },
  });
}
