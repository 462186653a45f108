/**
 * Fair intake within one API process (docs/security.md, fair scheduling): at most `perAccount`
 * of one account's inference requests at a time between their route's start and their job
 * being queued (the body checked, the model resolved, admission, the queue's choice, the add),
 * the rest of that account's waiting their turn in order. Their bodies are read before they
 * come here (api/middleware/read-body.ts), so a slow client never holds a place.
 *
 * Why: an API process has one event loop, which serves callbacks first come, first served. 500
 * requests sent at once by one account each take a few round trips to Redis on their way to
 * the queue; without this, another account's request arriving among them waited behind every
 * step of all 500, about a hundred times its unloaded latency (docs/performance.md,
 * fairness). With it, that request's steps interleave with those of `perAccount` of them. A request waiting
 * here holds only its socket and a promise; the flood's throughput is unchanged, since the
 * queue, not the intake, is what it waits for.
 */
export class IntakeGate {
  private readonly accounts = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(private readonly perAccount: number) {}

  /** Waits for one of the account's places; resolves to the function that leaves it (once; later calls do nothing). */
  async enter(accountId: string): Promise<() => void> {
    let account = this.accounts.get(accountId);
    if (!account) {
      account = { active: 0, waiting: [] };
      this.accounts.set(accountId, account);
    }
    const entry = account;
    if (entry.active < this.perAccount) entry.active++;
    else await new Promise<void>((resolve) => entry.waiting.push(resolve)); // handed a place by one leaving
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = entry.waiting.shift();
      if (next) next();
      else if (--entry.active === 0) this.accounts.delete(accountId);
    };
  }

  /** The account's requests inside and waiting (for tests and the console). */
  load(accountId: string): { active: number; waiting: number } {
    const entry = this.accounts.get(accountId);
    return { active: entry?.active ?? 0, waiting: entry?.waiting.length ?? 0 };
  }
}
