import crypto from "node:crypto";

/**
 * Templates that went past the sandbox's time or memory bound, refused at once for a while
 * (HEARTH_TEMPLATE_QUARANTINE_MS) instead of holding a thread again on every request. A
 * template is known by the SHA-256 of its text: the same text hangs the same way whoever sends
 * it. Each process keeps what it saw; a shared store (Redis, limits/template-quarantine-store.ts)
 * tells the API's admission, its save-time check and the model's page what any worker saw.
 */

export interface QuarantineEntry {
  /** Which bound it went past, in words ("took longer than 1000 ms to render"). */
  reason: string;
  /** When it was stopped, and until when it is refused (epoch ms). */
  since: number;
  until: number;
}

/** Where processes share their quarantines. */
export interface SharedQuarantine {
  get(hash: string): Promise<QuarantineEntry | undefined>;
  put(hash: string, entry: QuarantineEntry): Promise<void>;
}

/** The key a template is quarantined under. */
export function templateHash(template: string): string {
  return crypto.createHash("sha256").update(template, "utf8").digest("hex");
}

/** Entries kept in a process at most; the oldest go first (the shared store keeps them all). */
const MAX_LOCAL = 4096;

export class TemplateQuarantine {
  private readonly local = new Map<string, QuarantineEntry>();

  private shared: SharedQuarantine | undefined;
  private onSharedError: (error: unknown) => void = () => {};

  constructor(
    /** How long a template is refused; 0: never quarantined. */
    readonly durationMs: number,
  ) {}

  /** Shares this process's quarantines through `store`, and reads the others' there. */
  share(store: SharedQuarantine, onError: (error: unknown) => void): void {
    this.shared = store;
    this.onSharedError = onError;
  }

  /** The template's quarantine as this process knows it. */
  known(hash: string, now = Date.now()): QuarantineEntry | undefined {
    const entry = this.local.get(hash);
    if (entry && entry.until <= now) this.local.delete(hash);
    return entry && entry.until > now ? entry : undefined;
  }

  /** The template's quarantine as this process or any other knows it (one read of the shared store). */
  async lookup(hash: string): Promise<QuarantineEntry | undefined> {
    const mine = this.known(hash);
    if (mine || !this.shared || this.durationMs === 0) return mine;
    const entry = await this.shared.get(hash);
    if (!entry || entry.until <= Date.now()) return undefined;
    this.remember(hash, entry);
    return entry;
  }

  /** Quarantines a template that just went past a bound; undefined when quarantines are off. */
  record(hash: string, reason: string): QuarantineEntry | undefined {
    if (this.durationMs === 0) return undefined;
    const since = Date.now();
    const entry = { reason, since, until: since + this.durationMs };
    this.remember(hash, entry);
    this.shared?.put(hash, entry).catch(this.onSharedError);
    return entry;
  }

  private remember(hash: string, entry: QuarantineEntry): void {
    this.local.delete(hash);
    if (this.local.size >= MAX_LOCAL) this.local.delete(this.local.keys().next().value!);
    this.local.set(hash, entry);
  }
}

/** What a refused template's request says. */
export function quarantineMessage(entry: QuarantineEntry): string {
  return (
    `This chat template was stopped at ${new Date(entry.since).toISOString()} (it ${entry.reason}) and is refused ` +
    `until ${new Date(entry.until).toISOString()}: change the model's template, or retry after that.`
  );
}
