/**
 * Requests this worker may be asked to stop. A cancel can arrive before the job
 * does (it was still queued when the client left), so recent cancels are kept
 * for a while and honoured when the job starts.
 */
export class Cancellations {
  private readonly running = new Map<string, AbortController>();
  private readonly recent = new Map<string, number>();

  constructor(private readonly rememberMs = 60_000) {}

  /** The signal of a starting request; already aborted if it was cancelled. */
  start(requestId: string): AbortSignal {
    const controller = new AbortController();
    if (this.recent.has(requestId)) controller.abort();
    this.running.set(requestId, controller);
    return controller.signal;
  }

  finish(requestId: string): void {
    this.running.delete(requestId);
  }

  cancel(requestId: string): void {
    const controller = this.running.get(requestId);
    if (controller) controller.abort();
    else this.remember(requestId);
  }

  /** Aborts everything running (shutdown). */
  cancelAll(): void {
    for (const controller of this.running.values()) controller.abort();
  }

  private remember(requestId: string) {
    const now = Date.now();
    this.recent.set(requestId, now);
    for (const [id, at] of this.recent) {
      if (now - at <= this.rememberMs) break;
      this.recent.delete(id);
    }
  }
}
