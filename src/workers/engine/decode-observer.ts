import type { LlamaContext } from "node-llama-cpp";
import type { DecodeSample } from "./engine.js";
import { stepPasses } from "./sequence-ids.js";

interface NativeBatching {
  initBatch(size: number): unknown;
  addToBatch(...args: unknown[]): unknown;
  decodeBatch(): Promise<unknown>;
  sampleToken(...args: unknown[]): Promise<unknown>;
}

/**
 * The longest wait between two generation steps of a context that still counts as the time
 * between them: a context whose requests keep generating starts its next step within
 * milliseconds; one that went idle starts its next much later, and that wait is not a step's.
 */
export const BETWEEN_STEPS_MAX_MS = 1_000;

/**
 * Reports every decode of a context: how many tokens and sequences shared it, and how long
 * it took. This is what shows whether concurrent requests share their decodes (one batch of
 * 16 sequences a step) or run out of step, whether a step takes far longer than this model's
 * own figure (threads waiting for the CPU), and how many passes llama.cpp makes over a step (one
 * for each run of consecutive sequence IDs in the batch's order: sequence-ids.ts).
 *
 * And what happens between two generation steps (`between`): from the end of one step's decode
 * to the first sampling it asks for (node-llama-cpp's batch loop handing out the logits), the
 * samplings (from the first asked to the last answered, the batch sampler's gathering included),
 * and from the last answer to the next step's decode (the generation loops' JavaScript: the
 * requests' tokens, their events, the next batch's dispatch). That is where a step's time goes
 * besides the decode: on a GPU, whose decode of many sequences costs about what one costs, it is
 * what decides how much a batch gains.
 *
 * node-llama-cpp builds each batch on its internal native context (`_ctx`: initBatch, then
 * addToBatch per sequence, then decodeBatch, then sampleToken per sequence); this shadows those
 * on the instance, outside sampling-guard.ts's own shadow of sampleToken (it is installed after
 * it). The test that runs concurrent sequences through the engine (llama-engine.test.ts) fails on
 * a version where they change.
 */
export function observeDecodes(context: LlamaContext, onDecode: (sample: DecodeSample) => void): void {
  const native = (context as unknown as { _ctx?: Partial<NativeBatching> })._ctx;
  if (
    typeof native?.initBatch !== "function" ||
    typeof native.addToBatch !== "function" ||
    typeof native.decodeBatch !== "function" ||
    typeof native.sampleToken !== "function"
  ) {
    throw new Error(
      "node-llama-cpp's context has no native batch methods: observeDecodes needs updating for this version",
    );
  }
  const initBatch = native.initBatch.bind(native);
  const addToBatch = native.addToBatch.bind(native);
  const decodeBatch = native.decodeBatch.bind(native);
  const sampleToken = native.sampleToken.bind(native);
  let tokens = 0;
  /** The batch's sequences' IDs, in the order it holds them. */
  let order: number[] = [];
  /** When the last decode ended, if it was a generation step; the samplings asked since then. */
  let stepEnded: number | undefined;
  let firstAsked: number | undefined;
  let lastAnswered: number | undefined;
  const shadow = (name: keyof NativeBatching, value: (...args: never[]) => unknown) =>
    Object.defineProperty(native, name, { configurable: true, value });
  shadow("initBatch", (size: number) => {
    tokens = size;
    order = [];
    return initBatch(size);
  });
  shadow("addToBatch", (...args: unknown[]) => {
    order.push(args[0] as number);
    return addToBatch(...args);
  });
  const answered = () => {
    if (stepEnded !== undefined) lastAnswered = performance.now();
  };
  shadow("sampleToken", (...args: unknown[]) => {
    const afterStep = stepEnded !== undefined;
    if (afterStep) firstAsked ??= performance.now();
    const answer = sampleToken(...args);
    if (afterStep) answer.then(answered, answered);
    return answer;
  });
  shadow("decodeBatch", async () => {
    const sequences = order.length;
    const step = tokens === sequences;
    const batch = { tokens, sequences, ...(step ? { passes: stepPasses(order) } : {}) };
    const started = performance.now();
    const between =
      step &&
      stepEnded !== undefined &&
      firstAsked !== undefined &&
      lastAnswered !== undefined &&
      started - stepEnded <= BETWEEN_STEPS_MAX_MS
        ? {
            beforeSamplingMs: firstAsked - stepEnded,
            samplingMs: lastAnswered - firstAsked,
            afterSamplingMs: Math.max(0, started - lastAnswered),
          }
        : undefined;
    stepEnded = undefined;
    firstAsked = undefined;
    lastAnswered = undefined;
    const result = await decodeBatch();
    const ended = performance.now();
    if (step) stepEnded = ended;
    onDecode({ ...batch, ms: ended - started, ...(between ? { between } : {}) });
    return result;
  });
}
