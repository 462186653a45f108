import { AppError } from "../errors.js";

/**
 * Requests this worker may be asked to stop, each with why: the reason becomes the request's
 * error event (streamed-job.ts), so an answer cut short says so. A cancel can arrive before
 * the job does (it was still queued when the client left), so recent cancels are kept for a
 * while and honoured when the job starts.
 */
export class Cancellations {
  private readonly running = new Map<string, AbortController>();
  private readonly recent = new Map<string, { at: number; reason: AppError }>();

  constructor(private readonly rememberMs = 60_000) {}

  /** The signal of a starting request; already aborted if it was cancelled. */
  start(requestId: string): AbortSignal {
    const controller = new AbortController();
    const early = this.recent.get(requestId);
    if (early) controller.abort(early.reason);
    this.running.set(requestId, controller);
    return controller.signal;
  }

  finish(requestId: string): void {
    this.running.delete(requestId);
  }

  cancel(requestId: string, reason: AppError = clientLeft()): void {
    const controller = this.running.get(requestId);
    if (controller) controller.abort(reason);
    else this.remember(requestId, reason);
  }

  /** Aborts everything running (shutdown). */
  cancelAll(reason: AppError): void {
    for (const controller of this.running.values()) controller.abort(reason);
  }

  private remember(requestId: string, reason: AppError) {
    const now = Date.now();
    this.recent.set(requestId, { at: now, reason });
    for (const [id, { at }] of this.recent) {
      if (now - at <= this.rememberMs) break;
      this.recent.delete(id);
    }
  }
}

const clientLeft = () => new AppError("unavailable", "The request was cancelled: its client went away.");

/** Why a request was stopped: the AppError it was aborted with, or a generic one. */
export function cancelReason(signal: AbortSignal): AppError {
  return signal.reason instanceof AppError
    ? signal.reason
    : new AppError("unavailable", "The request was stopped before its answer was complete; please retry.");
}
