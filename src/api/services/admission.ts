import type { Logger } from "../../logger.js";
import type { InFlightRequests } from "../../limits/in-flight.js";
import type { Consumed, RateWindows, WindowState } from "../../limits/rate-windows.js";
import { AppError } from "../../errors.js";
import type { Queueing } from "../../requests/inference-client.js";
import type { SequencedEvent, Usage } from "../../requests/stream.js";
import type { Caller } from "../../domain/caller.js";
import type { AccountLimitsCache } from "./account-limits.js";

/**
 * Who may go on, in one place (docs/security.md): every /v1 request against its key's and its
 * account's requests per minute, every web page's against its session's (or address's); every generation also against the account's tokens per minute
 * (its estimate at admission, corrected to its usage at the end) and its cap on requests queued
 * or running, whose count orders the queue fairly between accounts. Refusals are 429s with
 * Retry-After; answers carry OpenAI's x-ratelimit-* headers either way.
 */
export class Admission {
  constructor(
    private readonly windows: RateWindows,
    private readonly inFlight: InFlightRequests,
    private readonly limits: AccountLimitsCache,
    private readonly perKeyAndPage: { keyRequestsPerMinute: number; pageRequestsPerMinute: number },
    private readonly log: Logger,
  ) {}

  /**
   * A web page's request, counted for `subject` (its session, or its address when signed out);
   * a 429 past HEARTH_PAGE_REQUESTS_PER_MINUTE.
   */
  async page(subject: string): Promise<void> {
    const limit = this.perKeyAndPage.pageRequestsPerMinute;
    if (limit === 0) return;
    const window = await this.windows.consume("page-requests", subject, 1, limit);
    if (!window.allowed) throw limited(`More than ${limit} page requests this minute.`, window, "requests");
  }

  /**
   * A /v1 request: counts it for its key and its account, both at once (a request one window
   * refuses is still counted in the other, as a refused one is in its own); the headers to
   * answer with.
   */
  async request(caller: Caller): Promise<Record<string, string>> {
    const { requestsPerMinute } = await this.limits.of(caller.accountId);
    const perKey = this.perKeyAndPage.keyRequestsPerMinute;
    const [key, account] = await Promise.all([
      perKey > 0 ? this.windows.consume("key-requests", caller.keyId, 1, perKey) : undefined,
      requestsPerMinute !== null
        ? this.windows.consume("account-requests", caller.accountId, 1, requestsPerMinute)
        : undefined,
    ]);
    if (key && !key.allowed) {
      throw limited(`This API key made more than ${key.limit} requests this minute.`, key, "requests");
    }
    if (account && !account.allowed) {
      throw limited(
        `Account "${caller.accountId}" made more than ${account.limit} requests this minute.`,
        account,
        "requests",
      );
    }
    // The window that binds (the fewest requests left) is the one reported.
    const binding = [key, account]
      .filter((w): w is Consumed => w !== undefined)
      .sort((a, b) => a.remaining - b.remaining)[0];
    return binding ? rateHeaders(binding, "requests") : {};
  }

  /**
   * A generation about to be queued: `estimate` is its most tokens (prompt bytes plus
   * max_tokens for every choice). Resolves to its ticket: the priority it queues with, the
   * headers, and `track`, which follows its events and settles the account at its end.
   */
  async generation(caller: Caller, requestId: string, estimate: number): Promise<GenerationTicket> {
    const accountId = caller.accountId;
    const limits = await this.limits.of(accountId);
    const tpm = limits.tokensPerMinute;
    const counting = tpm !== null && estimate > 0;
    if (counting && estimate > tpm) {
      throw new AppError(
        "rate_limited",
        `This request may use up to ${estimate} tokens (its prompt and max_tokens for every choice), more than the ${tpm} tokens per minute account "${accountId}" may use: lower max_tokens or n.`,
        { param: "max_tokens" },
      );
    }
    // The tokens and the slot at once (one round trip to Redis); whichever refuses or fails,
    // the other is given back.
    const [tokens, slot] = await Promise.allSettled([
      counting ? this.windows.consume("account-tokens", accountId, estimate, tpm) : undefined,
      this.inFlight.admit(accountId, requestId, limits.maxInFlightRequests),
    ]);
    const tokensTaken = tokens.status === "fulfilled" && tokens.value !== undefined;
    const tokensOk = tokens.status === "fulfilled" && (tokens.value === undefined || tokens.value.allowed);
    const slotOk = slot.status === "fulfilled" && slot.value.admitted;
    if (!tokensOk || !slotOk) {
      await Promise.all([
        tokensTaken ? this.windows.refund("account-tokens", accountId, estimate, tpm!) : undefined,
        slotOk ? this.inFlight.release(accountId, requestId) : undefined,
      ]);
      if (tokens.status === "rejected") throw tokens.reason;
      if (slot.status === "rejected") throw slot.reason;
      if (!tokensOk) {
        const window = tokens.value!;
        throw limited(
          `Account "${accountId}" has used its ${tpm} tokens per minute (this request may use up to ${estimate}).`,
          { ...window, remaining: Math.max(0, window.remaining) },
          "tokens",
        );
      }
      throw new AppError(
        "rate_limited",
        `Account "${accountId}" has ${slot.value.before} requests queued or running, its limit; retry when some have finished.`,
        { headers: { "retry-after": "1" } },
      );
    }
    const counted = tokensTaken ? estimate : 0;
    const headers = tokens.value ? rateHeaders(tokens.value, "tokens") : {};
    const settle = async (usage: Usage | undefined) => {
      await this.inFlight.release(accountId, requestId);
      if (tpm === null || counted === 0) return;
      const used = usage ? usage.promptTokens + usage.completionTokens : 0;
      if (used < counted) await this.windows.refund("account-tokens", accountId, counted - used, tpm);
      else await this.windows.charge("account-tokens", accountId, used - counted, tpm);
    };
    return {
      // BullMQ runs lower first: an account's first request in flight goes before another's tenth.
      priority: slot.value.before + 1,
      headers,
      track: (events) => this.track(events, settle, requestId),
      release: () => settle(undefined),
    };
  }

  private async *track(
    events: AsyncGenerator<SequencedEvent, void, undefined>,
    settle: (usage: Usage | undefined) => Promise<void>,
    requestId: string,
  ): AsyncGenerator<SequencedEvent, void, undefined> {
    let usage: Usage | undefined;
    try {
      for await (const event of events) {
        if (event.type === "done") usage = event.usage;
        yield event;
      }
    } finally {
      await settle(usage).catch((error: unknown) =>
        this.log.warn("could not settle a request's limits", { requestId, error: String(error) }),
      );
    }
  }
}

/** A generation's ticket as a route holds it: how its job queues, priority and the intake gate's leaving. */
export type RouteTicket = GenerationTicket & { queueing: Queueing };

export interface GenerationTicket {
  /** What the job queues with (InferenceClient's RunOptions.priority). */
  priority: number;
  headers: Record<string, string>;
  /** The request's events, passed through; at their end (or the client's leaving) the account is settled. */
  track(events: AsyncGenerator<SequencedEvent, void, undefined>): AsyncGenerator<SequencedEvent, void, undefined>;
  /** Settles a request that never ran (it failed before its events were followed). */
  release(): Promise<void>;
}

/** A 429 for a window past its limit: Retry-After and the window's x-ratelimit-* headers. */
export function limited(message: string, window: WindowState, kind: "requests" | "tokens"): AppError {
  return new AppError("rate_limited", `${message} Retry in ${Math.ceil(window.resetMs / 1000)} s.`, {
    headers: { "retry-after": String(Math.max(1, Math.ceil(window.resetMs / 1000))), ...rateHeaders(window, kind) },
  });
}

/** OpenAI's headers for one window: x-ratelimit-limit-requests, -remaining-requests, -reset-requests (or -tokens). */
export function rateHeaders(window: WindowState, kind: "requests" | "tokens"): Record<string, string> {
  return {
    [`x-ratelimit-limit-${kind}`]: String(window.limit),
    [`x-ratelimit-remaining-${kind}`]: String(window.remaining),
    [`x-ratelimit-reset-${kind}`]: duration(window.resetMs),
  };
}

/** 1500 → "1.5s", 61000 → "1m1s", 250 → "250ms", as OpenAI writes resets. */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 100) / 10;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}
