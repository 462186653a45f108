import type { Db } from "../db/client.js";
import { insertBatchResults } from "../db/queries/batches.js";
import type { batchResults } from "../db/schema/batches.js";

export type LineResult = Omit<typeof batchResults.$inferInsert, "batchId">;

/** How long the first result of a group waits for others. */
const WAIT_MS = 20;

/**
 * Writes one batch run's line results in groups, one statement each (the results that came
 * within a few milliseconds of the first, up to `group`: the run's lines in flight), one group
 * at a time: a line's result costs the database a row rather than a statement and a round trip,
 * which matters where it is the API's own thread (PGlite) and the API runs interactive requests
 * too. A result not written yet when its runner dies is a line without a result: the next
 * runner runs it again, as one whose runner died before its write (batch-run.ts). `add` makes
 * its line wait while two groups are being written, so that no more than a few groups' results
 * are ever unwritten. A group that fails to be written fails `drain`, and the run with it.
 */
export class BatchResultWriter {
  private pending: LineResult[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Groups being written or waiting to be. */
  private groups = 0;
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly db: Db,
    private readonly batchId: string,
    private readonly group: number,
  ) {}

  /** Adds a line's result; resolves at once, or once the groups ahead are written when two are. */
  add(result: LineResult): Promise<void> {
    this.pending.push(result);
    if (this.pending.length >= this.group) this.write();
    else this.timer ??= setTimeout(() => this.write(), WAIT_MS);
    return this.groups > 1 ? this.writing : Promise.resolve();
  }

  /** Writes what is pending; resolves once every result added is written, or rejects with the first failure. */
  async drain(): Promise<void> {
    this.write();
    await this.writing;
    if (this.failure) throw this.failure.error;
  }

  private write(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const group = this.pending.splice(0);
    if (group.length === 0) return;
    this.groups++;
    this.writing = this.writing.then(async () => {
      if (!this.failure) {
        await insertBatchResults(this.db, this.batchId, group).catch((error: unknown) => {
          this.failure = { error };
        });
      }
      this.groups--;
    });
  }
}
