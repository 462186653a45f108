import type { LlamaContext } from "node-llama-cpp";
import { BATCH_FAILED, BATCH_NO_TOKEN, type SamplingBatches } from "./batch-sampler.js";

interface NativeContext {
  sampleToken(...args: unknown[]): Promise<unknown>;
}

interface Gathered {
  index: number;
  sampler: object;
  resolve: (token: unknown) => void;
}

/** What node-llama-cpp's native sampleToken answers when it has no token to give ("Failed to sample next token"). */
const NO_TOKEN = BATCH_NO_TOKEN;

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
 * With `batching` (the batch sampler built, batch-sampler.ts), the samplings a step asks for
 * together go in one native call instead, in turn with any other sampling of the context: the
 * same samplers and chain, without a thread-pool hand-off and a promise per sequence. Only a
 * sampling that asks for probabilities (a logprob request's) still goes alone.
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
export function guardSampling(context: LlamaContext, batching?: SamplingBatches): void {
  const native = (context as unknown as { _ctx?: Partial<NativeContext> })._ctx;
  if (typeof native?.sampleToken !== "function") {
    throw new Error(
      "node-llama-cpp's context has no native sampleToken: guardSampling needs updating for this version",
    );
  }
  const sample = native.sampleToken.bind(native);
  const failed = (error: unknown) => {
    failures.set(context, error);
    return NO_TOKEN;
  };
  const contained = (args: unknown[]) => sample(...args).catch(failed);
  let pending = 0;
  let tail: Promise<unknown> = Promise.resolve();
  /** Runs `work` once every sampling asked before it is done: at once when none is under way. */
  const inTurn = (work: () => Promise<unknown>) => {
    const next = pending === 0 ? work() : tail.then(work);
    pending++;
    tail = next.then(() => {
      pending--;
    });
    return next;
  };

  /** One batch: every sequence's sampling in one native call (batch-sampler.ts). */
  const sampleBatch = async (batch: Gathered[], { sampler, threads }: SamplingBatches) => {
    if (batch.length === 1) {
      const [one] = batch as [Gathered];
      one.resolve(await contained([one.index, one.sampler]));
      return;
    }
    try {
      const indexes = Int32Array.from(batch, (item) => item.index);
      const samplers = batch.map((item) => item.sampler);
      const { tokens, errors } = await sampler.sampleTokens(native, indexes, samplers, threads(batch.length));
      batch.forEach((item, i) => {
        const token = tokens[i]!;
        item.resolve(token === BATCH_FAILED ? failed(new Error(errors[i] ?? "sampling failed")) : token);
      });
    } catch (error) {
      for (const item of batch) item.resolve(failed(error));
    }
  };
  let gathering: { items: Gathered[]; samplers: Set<object> } | undefined;
  /** Queues the batch being gathered (once), and starts gathering afresh. */
  const close = (batch: NonNullable<typeof gathering>, batches: SamplingBatches) => {
    if (gathering === batch) gathering = undefined;
    else return;
    void inTurn(() => sampleBatch(batch.items, batches));
  };
  const gather = (index: number, sampler: object, batches: SamplingBatches) =>
    new Promise<unknown>((resolve) => {
      // A sampler goes once a batch (its candidates buffer is its own, and a batch may use
      // threads); node-llama-cpp's lock per sampler already keeps it so, and order is kept if not.
      if (gathering?.samplers.has(sampler)) close(gathering, batches);
      if (gathering === undefined) {
        const batch = { items: [] as Gathered[], samplers: new Set<object>() };
        gathering = batch;
        // node-llama-cpp asks for every sequence of a decoded batch in the turn the decode ended
        // in (its batch loop maps them all before it awaits any): once that turn is over, all of
        // this step's samplings are here.
        setImmediate(() => close(batch, batches));
      }
      gathering.items.push({ index, sampler, resolve });
      gathering.samplers.add(sampler);
    });

  // The native addon's methods (llama.cpp's binding) are read-only on its prototype: shadow this one on the instance.
  Object.defineProperty(native, "sampleToken", {
    configurable: true,
    value: (...args: unknown[]) => {
      const [index, sampler] = args;
      // A sampling with no probabilities asked (two arguments) can go with the step's others.
      if (batching && args.length === 2 && typeof index === "number" && typeof sampler === "object" && sampler) {
        return gather(index, sampler, batching);
      }
      return inTurn(() => contained(args));
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
