import type { LlamaContext } from "node-llama-cpp";
import type { DecodeSample } from "./engine.js";

interface NativeBatching {
  initBatch(size: number): unknown;
  addToBatch(...args: unknown[]): unknown;
  decodeBatch(): Promise<unknown>;
}

/**
 * Reports every decode of a context: how many tokens and sequences shared it, and how long
 * it took. This is what shows whether concurrent requests share their decodes (one batch of
 * 16 sequences a step) or run out of step, and whether a step takes far longer than this
 * model's own figure (threads waiting for the CPU).
 *
 * node-llama-cpp builds each batch on its internal native context (`_ctx`: initBatch, then
 * addToBatch per sequence, then decodeBatch); this shadows those three on the instance, as
 * sampling-guard.ts does for sampling. The test that runs concurrent sequences through the
 * engine (llama-engine.test.ts) fails on a version where they change.
 */
export function observeDecodes(context: LlamaContext, onDecode: (sample: DecodeSample) => void): void {
  const native = (context as unknown as { _ctx?: Partial<NativeBatching> })._ctx;
  if (
    typeof native?.initBatch !== "function" ||
    typeof native.addToBatch !== "function" ||
    typeof native.decodeBatch !== "function"
  ) {
    throw new Error(
      "node-llama-cpp's context has no native batch methods: observeDecodes needs updating for this version",
    );
  }
  const initBatch = native.initBatch.bind(native);
  const addToBatch = native.addToBatch.bind(native);
  const decodeBatch = native.decodeBatch.bind(native);
  let tokens = 0;
  let sequences = 0;
  const shadow = (name: keyof NativeBatching, value: (...args: never[]) => unknown) =>
    Object.defineProperty(native, name, { configurable: true, value });
  shadow("initBatch", (size: number) => {
    tokens = size;
    sequences = 0;
    return initBatch(size);
  });
  shadow("addToBatch", (...args: unknown[]) => {
    sequences++;
    return addToBatch(...args);
  });
  shadow("decodeBatch", async () => {
    const batch = { tokens, sequences };
    const started = performance.now();
    const result = await decodeBatch();
    onDecode({ ...batch, ms: performance.now() - started });
    return result;
  });
}
