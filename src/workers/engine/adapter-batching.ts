import type { BatchItem, LlamaContext, LlamaContextSequence } from "node-llama-cpp";
import type { EngineAdapter } from "./engine.js";
import type { LoraSetGuard } from "./lora-set-guard.js";
import { queuedSequenceIds, sequenceIdOf } from "./sequence-ids.js";

/** A LoRA adapter's weights as node-llama-cpp's native addon holds them (opaque here). */
export type NativeLora = object;

/** An adapter as this engine loads it: the engine's handle on its native weights. */
export interface LlamaEngineAdapter extends EngineAdapter {
  readonly lora: NativeLora;
}

interface NativeContext {
  setLoras(loras: NativeLora[], scales: number[]): void;
  decodeBatch(): Promise<unknown>;
}

/**
 * Several LoRA adapters served from one context, as llama-server does: each decode batch
 * holds the sequences of one adapter (or of none), and the context's active adapter is
 * switched between batches. Every sequence keeps its KV cells, computed with its own
 * adapter, so an adapter costs its weights only, not a context of its own.
 *
 * node-llama-cpp has no public API for this, so it goes through three of its internals,
 * each checked where it is used (the engine tests fail on a version that changes them):
 * - a custom batch prioritization strategy (StepGang's, with `pick`), which node-llama-cpp
 *   calls with the queued decodes in the order of its internal `_queuedDecodes` (whose
 *   entries name their sequence: sequence-ids.ts): `pick` takes the adapter of the
 *   longest-waiting decode and keeps the decodes of that adapter only (the others wait for the
 *   next batch of the loop);
 * - the sequence's internal `_sequenceId`;
 * - the native context's `setLoras`, called just before the native `decodeBatch` when the
 *   batch's adapter differs from the active one. llama.cpp then reserves its compute graph
 *   again on that decode, which is what a switch costs (docs/performance.md); the pool of
 *   shared contexts sends an adapter's requests where it already runs, to switch less. That
 *   reserve reads the model's set of adapters, so the decode runs as a reader of the model's
 *   LoraSetGuard (no adapter of the model is loaded or freed meanwhile).
 */
export class AdapterBatching {
  private readonly bySequence = new Map<number, NativeLora>();
  private context: LlamaContext | undefined;
  private native: NativeContext | undefined;
  /** The adapter of the batch being built, and the one set on the native context. */
  private next: NativeLora | undefined;
  private active: NativeLora | undefined;
  private decoding: Promise<unknown> | undefined;
  /** The adapters set on the native context changed since its last decode, which will reserve. */
  private reserving = false;
  /** Decodes whose batch switched the adapter: how often a reserve was paid. */
  switches = 0;

  constructor(private readonly loraSet: LoraSetGuard) {}

  /** Chooses a batch's decodes (StepGang's picker): those of the longest-waiting decode's adapter. */
  readonly pick = (
    items: readonly BatchItem[],
    ids: readonly number[] = queuedSequenceIds(this.context, items),
  ): readonly BatchItem[] => {
    const adapterOf = (i: number) => this.bySequence.get(ids[i]!);
    const chosen = adapterOf(0);
    this.next = chosen;
    return items.filter((_, i) => adapterOf(i) === chosen);
  };

  /** Takes over the context's decodes; call once, right after creating it with `pick` in its strategy. */
  attach(context: LlamaContext): void {
    const native = (context as unknown as { _ctx?: Partial<NativeContext> })._ctx;
    if (typeof native?.setLoras !== "function" || typeof native.decodeBatch !== "function") {
      throw new Error(
        "node-llama-cpp's context has no native setLoras: AdapterBatching needs updating for this version",
      );
    }
    this.context = context;
    this.native = native as NativeContext;
    const decodeBatch = native.decodeBatch.bind(native);
    Object.defineProperty(native, "decodeBatch", {
      configurable: true,
      value: () => {
        if (this.next !== this.active) {
          this.apply(this.next);
          this.switches++;
        }
        const reserving = this.reserving;
        this.reserving = false;
        const decoding = reserving ? this.loraSet.reading(decodeBatch) : decodeBatch();
        this.decoding = decoding;
        const settled = () => {
          if (this.decoding === decoding) this.decoding = undefined;
        };
        decoding.then(settled, settled);
        return decoding;
      },
    });
  }

  /** The sequence's decodes run with `lora` (none: the base model) until it is released. */
  assign(sequence: LlamaContextSequence, lora: NativeLora | undefined): void {
    const id = sequenceIdOf(sequence);
    if (lora === undefined) this.bySequence.delete(id);
    else this.bySequence.set(id, lora);
  }

  release(sequence: LlamaContextSequence): void {
    this.bySequence.delete(sequenceIdOf(sequence));
  }

  /**
   * Lets go of `lora` before its weights are freed: no sequence may use it any more, and once
   * no decode is running the context no longer has it set (llama.cpp would read freed memory
   * on the next decode otherwise).
   */
  async letGo(lora: NativeLora): Promise<void> {
    for (const used of this.bySequence.values()) {
      if (used === lora) throw new Error("an adapter still in use by a sequence cannot be freed");
    }
    while (this.decoding && this.active === lora) await this.decoding.catch(() => {});
    if (this.active === lora) this.apply(undefined);
    if (this.next === lora) this.next = undefined;
  }

  private apply(lora: NativeLora | undefined) {
    this.native!.setLoras(lora === undefined ? [] : [lora], lora === undefined ? [] : [1]);
    this.active = lora;
    this.reserving = true;
  }
}
