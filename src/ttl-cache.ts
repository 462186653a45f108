export interface TtlCacheOptions {
  /** How long an entry is kept; 0 keeps nothing (every lookup loads). */
  ttlMs: number;
  /** Entries beyond this push out the least recently used. */
  maxEntries: number;
  /** The clock, in milliseconds (tests move it). */
  now?: () => number;
}

/** What the owner of a cache lets its creator choose: the TTL (from config) and, in tests, the clock. */
export type CacheTiming = Pick<TtlCacheOptions, "ttlMs" | "now">;

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * A bounded in-process cache of successful lookups. Failures are never stored:
 * `getOrLoad` keeps only a non-null result. A load that was under way when the cache
 * was invalidated does not store its result, which may predate the change.
 */
export class TtlCache<K, V> {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  private readonly entries = new Map<K, Entry<V>>();
  private generation = 0;
  private readonly now: () => number;

  constructor(private readonly options: TtlCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached value, else what `load` gives (stored unless null). Errors of `load` pass through. */
  async getOrLoad<R extends V | null>(key: K, load: () => Promise<R>): Promise<V | R> {
    if (this.options.ttlMs <= 0) return load();
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const generation = this.generation;
    const value = await load();
    if (value !== null && generation === this.generation) this.set(key, value);
    return value;
  }

  /** The cached value, if there is one still fresh (nothing is loaded). */
  cached(key: K): V | undefined {
    return this.options.ttlMs <= 0 ? undefined : this.get(key);
  }

  /** Drops the entries whose value (or key) matches. */
  deleteWhere(matches: (value: V, key: K) => boolean): void {
    this.generation++;
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  private get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  private set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + this.options.ttlMs });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) break;
      this.entries.delete(oldest);
    }
  }
}
