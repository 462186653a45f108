import type { EngineContext } from "./engine/engine.js";

/** A context with a LoRA adapter, held for one request; release it when the request ends. */
export interface AdapterLease {
  context: EngineContext;
  release(): void;
}

/** Why an adapter context was freed. */
export type AdapterEviction = "lru" | "undeployed" | "closed";

export interface AdapterContextsHooks {
  loaded?(key: string, ms: number): void;
  evicted?(key: string, reason: AdapterEviction): void;
}

interface Entry {
  readonly key: string;
  readonly context: Promise<EngineContext>;
  ready: boolean;
  /** Requests holding the context (a loading context is held by whoever asked for it). */
  leases: number;
  /** Undeployed: freed as soon as no request holds it. */
  unwanted: boolean;
}

/**
 * The loaded adapters of one model object, each as the EngineContext its requests run on
 * (the model instance's: its weights applied on the contexts adapters share), loaded on
 * first use and kept in least-recently-used order, at most `max` of them.
 *
 * - Concurrent first uses of an adapter share one load; a failed load is forgotten,
 *   so the next request tries again.
 * - An adapter some request holds is never freed. When every one is held, the set grows
 *   past `max` rather than making requests wait, and shrinks back (least recently used
 *   first) as leases end.
 * - `loads` counts the distinct adapters this model object has loaded (the served model
 *   renews the model object after so many; see served-model.ts).
 */
export class AdapterContexts {
  /** Least recently used first. */
  private readonly entries = new Map<string, Entry>();
  private readonly everLoaded = new Set<string>();
  private readonly disposals = new Set<Promise<void>>();

  constructor(
    private readonly open: (key: string) => Promise<EngineContext>,
    private readonly max: number,
    private readonly hooks: AdapterContextsHooks = {},
  ) {}

  /** Distinct adapters loaded (or loading) on this model object. */
  get loads(): number {
    return this.everLoaded.size;
  }

  /** True when using `key` costs no new adapter load on this model object. */
  knows(key: string): boolean {
    return this.everLoaded.has(key);
  }

  /** Adapter keys with a context (loaded or loading), least recently used first. */
  get keys(): string[] {
    return [...this.entries.keys()];
  }

  /** Requests holding each context. */
  get leases(): Record<string, number> {
    return Object.fromEntries([...this.entries.values()].map((e) => [e.key, e.leases]));
  }

  /**
   * Holds `key`'s context, loading it if needed. Everything before the first `await`
   * runs synchronously, so `loads` counts a load as soon as it is asked for.
   * `wanted` (a deploy) cancels an earlier undeploy.
   */
  async acquire(key: string, options: { wanted?: boolean } = {}): Promise<AdapterLease> {
    let entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    } else {
      entry = this.load(key);
    }
    if (options.wanted) entry.unwanted = false;
    entry.leases++;
    this.trim();
    const held = entry;
    let context: EngineContext;
    try {
      context = await held.context;
    } catch (error) {
      held.leases--;
      throw error;
    }
    let released = false;
    return {
      context,
      release: () => {
        if (released) return;
        released = true;
        this.release(held);
      },
    };
  }

  /** Frees `key`'s context once no request holds it (an undeploy). */
  forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.unwanted = true;
    if (entry.leases === 0 && entry.ready) this.remove(entry, "undeployed");
  }

  /** Frees every context; call once no request holds one. */
  async dispose(): Promise<void> {
    for (const entry of [...this.entries.values()]) {
      if (entry.ready) this.remove(entry, "closed");
    }
    // Contexts still loading are freed when their load ends.
    await Promise.allSettled([...this.entries.values()].map((e) => e.context));
    for (const entry of [...this.entries.values()]) if (entry.ready) this.remove(entry, "closed");
    await Promise.all(this.disposals);
  }

  private load(key: string): Entry {
    const isNew = !this.everLoaded.has(key);
    this.everLoaded.add(key);
    const started = Date.now();
    const entry: Entry = {
      key,
      ready: false,
      leases: 0,
      unwanted: false,
      context: this.open(key).then(
        (context) => {
          entry.ready = true;
          this.hooks.loaded?.(key, Date.now() - started);
          return context;
        },
        (error: unknown) => {
          if (this.entries.get(key) === entry) this.entries.delete(key);
          if (isNew) this.everLoaded.delete(key);
          throw error;
        },
      ),
    };
    // Whoever asked for the load sees its failure; this keeps it from also being "unhandled".
    entry.context.catch(() => {});
    this.entries.set(key, entry);
    return entry;
  }

  private release(entry: Entry) {
    entry.leases--;
    if (entry.leases > 0) return;
    if (entry.unwanted && this.entries.get(entry.key) === entry) this.remove(entry, "undeployed");
    else this.trim();
  }

  /** Frees idle contexts, least recently used first, until at most `max` remain. */
  private trim() {
    for (const entry of this.entries.values()) {
      if (this.entries.size <= this.max) return;
      if (entry.leases === 0 && entry.ready) this.remove(entry, "lru");
    }
  }

  private remove(entry: Entry, reason: AdapterEviction) {
    this.entries.delete(entry.key);
    const disposal = entry.context
      .then((context) => context.dispose())
      // A context whose load failed has nothing to dispose; its failure went to whoever asked for it.
      .catch(() => {})
      .finally(() => this.disposals.delete(disposal));
    this.disposals.add(disposal);
    this.hooks.evicted?.(entry.key, reason);
  }
}
