/**
 * The prefix keys (jobs/prompt-prefix.ts) of the last requests a served model ran or runs, most
 * recent last, at most `capacity` of them: what its prompt caches most likely hold. Each of its
 * sequences keeps the cells of the last prompt it ran and a new prompt takes the least recently
 * used sequence, so the last `capacity` distinct prompts, with capacity its number of
 * sequences, are about what the caches hold. The worker lists them in its heartbeat for
 * placement; an approximation that can only cost a request a prefix it would have had to
 * evaluate anyway.
 */
export class RecentPrefixes {
  /** Insertion order is recency: a key noted again is moved to the end. */
  private readonly recent = new Set<string>();

  constructor(private readonly capacity: number) {}

  note(key: string | undefined): void {
    if (key === undefined || this.capacity === 0) return;
    this.recent.delete(key);
    this.recent.add(key);
    for (const oldest of this.recent) {
      if (this.recent.size <= this.capacity) break;
      this.recent.delete(oldest);
    }
  }

  /** Forgets them all: the caches that held them are gone. */
  clear(): void {
    this.recent.clear();
  }

  get keys(): string[] {
    return [...this.recent];
  }
}
