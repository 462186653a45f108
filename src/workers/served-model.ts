import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { AdapterEviction } from "./adapter-contexts.js";
import { ModelInstance, type InferenceLease, type ModelInstanceOptions } from "./model-instance.js";
import { RecentPrefixes } from "./recent-prefixes.js";

/** What a served model reports, for tests and metrics (HearthWorker re-emits them by `type`). */
export type ServingEvent =
  | { type: "adapter-loaded"; baseModelId: string; adapterKey: string; generation: number; ms: number }
  | { type: "adapter-evicted"; baseModelId: string; adapterKey: string; generation: number; reason: AdapterEviction }
  /** A new model object took over; `previous` drains its in-flight requests, then is disposed. */
  | { type: "model-recycled"; baseModelId: string; generation: number; previous: number; adapterLoads: number }
  | { type: "model-disposed"; baseModelId: string; generation: number };

export interface ServedModelStats {
  /** The model object taking new requests: 0 for the first, then one more per recycling. */
  generation: number;
  /** Distinct adapters loaded on it (it is recycled when one more would exceed the limit). */
  adapterLoads: number;
  /** Adapter keys with a context, least recently used first. */
  adapters: string[];
  /** Requests holding each adapter context. */
  adapterLeases: Record<string, number>;
  /** Requests in flight on it. */
  requests: number;
  /** Sequences free on the base model's contexts and on the adapters' shared ones (what more requests may use at once). */
  freeSequences: { base: number; adapters: number };
  /** Older model objects still finishing their requests. */
  draining: { generation: number; requests: number }[];
  /** The prefix keys of the last prompts it ran, most recent last: those its prompt caches most likely hold. */
  prefixes: string[];
}

export interface ServedModelOptions
  extends Omit<ModelInstanceOptions, "hooks">,
    Pick<Config["worker"], "adapterLoadsPerModel"> {
  log: Logger;
  onEvent?(event: ServingEvent): void;
}

/**
 * One base model as a worker serves it: a model object with its base context(s), the
 * contexts its adapters share, and an LRU of loaded adapters (their weights). An evicted
 * adapter is freed, and the native allocator reuses that memory for the next ones without
 * returning it to the system (adapters loaded, freed and loaded again grow the process only
 * the first time). As a bound on what it keeps over many loads, once a
 * model object has loaded `adapterLoadsPerModel` distinct adapters and a request needs
 * another one, the model is loaded again (its weights are mmapped, so the copies share
 * memory): new requests go to the new object, the old one finishes the requests it has and
 * is then disposed.
 */
export class ServedModel {
  private current!: ModelInstance;
  private renewing: Promise<ModelInstance> | undefined;
  private readonly draining = new Map<ModelInstance, Promise<void>>();
  private readonly prefixes: RecentPrefixes;

  private constructor(private readonly options: ServedModelOptions) {
    const o = options;
    const sequences = o.contextsPerModel * o.sequencesPerContext + o.adapterContexts * o.adapterSequences;
    this.prefixes = new RecentPrefixes(o.promptCacheTokens === 0 ? 0 : sequences);
  }

  static async start(options: ServedModelOptions): Promise<ServedModel> {
    const served = new ServedModel(options);
    served.current = await ModelInstance.create(served.instanceOptions(0), 0);
    return served;
  }

  get id(): string {
    return this.options.base.id;
  }

  get contextSize(): number {
    return this.current.contextSize;
  }

  /** A model object and context for one request: the base context, or the adapter's. */
  async lease(adapterKey?: string, options: { wanted?: boolean } = {}): Promise<InferenceLease> {
    let force = false;
    for (;;) {
      const instance = this.renewing ? await this.renewing.catch(() => this.current) : this.current;
      if (force || this.fits(instance, adapterKey)) return instance.lease(adapterKey, options);
      // Renewal failed (e.g. out of memory): serve on the old object rather than fail the request.
      force = !(await this.renew(instance));
    }
  }

  /** Loads an adapter ahead of its first request (a deploy); cancels an earlier undeploy. */
  async preload(adapterKey: string): Promise<void> {
    const lease = await this.lease(adapterKey, { wanted: true });
    lease.release();
  }

  /** Frees an adapter's context once the requests using it have ended (an undeploy). */
  forget(adapterKey: string): void {
    this.current.adapters.forget(adapterKey);
  }

  /** A request with this prefix key (jobs/prompt-prefix.ts) runs: its cells will be kept. */
  ran(prefixKey: string | undefined): void {
    this.prefixes.note(prefixKey);
  }

  stats(): ServedModelStats {
    const { generation, adapters, requests } = this.current;
    const leases = adapters.leases;
    const adapterRequests = Object.values(leases).reduce((sum, n) => sum + n, 0);
    const o = this.options;
    return {
      generation,
      adapterLoads: adapters.loads,
      adapters: adapters.keys,
      adapterLeases: leases,
      requests,
      freeSequences: {
        base: Math.max(0, o.contextsPerModel * o.sequencesPerContext - (requests - adapterRequests)),
        adapters: Math.max(0, o.adapterContexts * o.adapterSequences - adapterRequests),
      },
      draining: [...this.draining.keys()].map((i) => ({ generation: i.generation, requests: i.requests })),
      prefixes: this.prefixes.keys,
    };
  }

  /** Disposes everything once the requests in flight have ended (stop taking jobs first). */
  async close(): Promise<void> {
    // A renewal that failed was logged where it failed; closing only waits for it to settle.
    await this.renewing?.catch(() => {});
    this.retire(this.current);
    await Promise.all(this.draining.values());
  }

  private fits(instance: ModelInstance, adapterKey: string | undefined): boolean {
    return (
      adapterKey === undefined ||
      instance.adapters.knows(adapterKey) ||
      instance.adapters.loads < this.options.adapterLoadsPerModel
    );
  }

  /** Replaces `old` with a new model object (once, however many requests ask); false if that failed. */
  private async renew(old: ModelInstance): Promise<boolean> {
    if (old !== this.current) return true;
    this.renewing ??= ModelInstance.create(this.instanceOptions(old.generation + 1), old.generation + 1)
      .then((fresh) => {
        this.current = fresh;
        // The new object's contexts start empty.
        this.prefixes.clear();
        this.retire(old);
        this.emit({
          type: "model-recycled",
          baseModelId: this.id,
          generation: fresh.generation,
          previous: old.generation,
          adapterLoads: old.adapters.loads,
        });
        return fresh;
      })
      .finally(() => {
        this.renewing = undefined;
      });
    try {
      await this.renewing;
      return true;
    } catch (error) {
      this.options.log.warn("could not load a fresh copy of the model; the old one goes on serving", {
        model: this.id,
        error: (error as Error).message,
      });
      return false;
    }
  }

  private retire(instance: ModelInstance) {
    if (this.draining.has(instance)) return;
    const done = instance
      .retire()
      .then(
        () => this.emit({ type: "model-disposed", baseModelId: this.id, generation: instance.generation }),
        (error: unknown) =>
          this.options.log.warn("disposing a model object failed", { model: this.id, error: (error as Error).message }),
      )
      .finally(() => this.draining.delete(instance));
    this.draining.set(instance, done);
  }

  private instanceOptions(generation: number): ModelInstanceOptions {
    return {
      ...this.options,
      hooks: {
        loaded: (adapterKey, ms) =>
          this.emit({ type: "adapter-loaded", baseModelId: this.id, adapterKey, generation, ms }),
        evicted: (adapterKey, reason) =>
          this.emit({ type: "adapter-evicted", baseModelId: this.id, adapterKey, generation, reason }),
      },
    };
  }

  private emit(event: ServingEvent) {
    this.options.onEvent?.(event);
  }
}
