import { setTimeout } from "node:timers/promises";
import type { Db } from "../db/client.js";
import { withTimeout } from "../process/with-timeout.js";
import { isRefusedData } from "../db/connection-errors.js";
import { insertUsageRecords } from "../db/queries/usage.js";
import type { UsageRecord } from "../domain/usage.js";
import type { Logger } from "../logger.js";
import type { RedisClient } from "../redis/connection.js";
import { readUsageEntry, usageEntryRequest, usageLogKey } from "../requests/usage-log.js";

export interface UsageMeterOptions {
  prefix: string;
  /** Names this meter among the API processes' (its pending entries are its own). */
  consumer: string;
  /** Records written in one statement at most. */
  batch?: number;
  /** How long one read waits for records before it looks again. */
  blockMs?: number;
  /**
   * After a read that did not fill a batch, how long records gather before the next: under load
   * each write then takes many, where a write per read took a few (a write's own cost is most
   * of a small batch's: docs/performance.md, "Metering"). A lone record is written at once.
   */
  gatherMs?: number;
  /** A record read by a meter that has not written it for this long is taken over (its process died). */
  claimIdleMs?: number;
  /** Called with the records this meter wrote first (metrics): across all meters, each record once. */
  onWritten?: (records: readonly UsageRecord[]) => void;
}

/** The consumer group every API process's meter reads the usage log in. */
const GROUP = "meter";

type StreamEntry = [id: string, fields: string[]];

/**
 * Writes the usage log (requests/usage-log.ts) to the database, in each API process: records
 * are read in batches as a Redis consumer group (each read by one meter, what gathered over
 * `gatherMs` under load), written in one statement keyed by request ID, and only then
 * acknowledged and deleted. A meter that dies
 * between its read and its acknowledgement leaves its records pending; another meter (or its
 * own process restarted) takes them over after `claimIdleMs` and writes them again, which adds
 * nothing already written. So each request counts once, however often its record is read.
 * Needs a connection of its own (it blocks on reads).
 */
export class UsageMeter {
  private closed = false;
  /** Ends the wait between two tries at once when the meter closes. */
  private readonly stopping = new AbortController();
  private readonly loop: Promise<void>;
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly db: Db,
    private readonly log: Logger,
    private readonly options: UsageMeterOptions,
  ) {
    this.key = usageLogKey(options.prefix);
    this.loop = this.run();
  }

  /**
   * Stops reading; what was read and not written stays pending for another meter. Never waits
   * long: with Redis or the database gone, a command in flight may never answer.
   */
  async close(graceMs = 2_000): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    this.redis.disconnect();
    await withTimeout(this.loop, graceMs).catch(() =>
      this.log.warn("the usage meter closed with a write in flight; its records stay pending for another meter"),
    );
  }

  private async run(): Promise<void> {
    const { batch = 500, blockMs = 1_000, gatherMs = 1_000, claimIdleMs = 30_000, consumer } = this.options;
    let failures = 0;
    while (!this.closed) {
      try {
        await this.ensureGroup();
        // Another meter's records, left pending when it died (or ours, after a failed write).
        const [, claimed] = (await this.redis.xautoclaim(
          this.key,
          GROUP,
          consumer,
          claimIdleMs,
          "0-0",
          "COUNT",
          batch,
        )) as [string, StreamEntry[]];
        if (claimed.length > 0) await this.write(claimed);
        const read = (await this.redis.xreadgroup(
          "GROUP",
          GROUP,
          consumer,
          "COUNT",
          batch,
          "BLOCK",
          blockMs,
          "STREAMS",
          this.key,
          ">",
        )) as [string, StreamEntry[]][] | null;
        const entries = read?.[0]?.[1] ?? [];
        if (entries.length > 0) await this.write(entries);
        failures = 0;
        if (entries.length > 0 && entries.length < batch) await this.pause(gatherMs);
      } catch (error) {
        if (this.closed) return;
        // A Redis that restarted without its data lost the group with the log: make it again.
        if (String(error).includes("NOGROUP")) this.groupReady = false;
        failures++;
        this.log.warn("could not write usage records; they stay in the usage log", { error: String(error) });
        await this.pause(Math.min(30_000, 500 * 2 ** Math.min(failures, 6)));
      }
    }
  }

  /** Waits, or less once the meter closes. */
  private pause(ms: number): Promise<void> {
    return setTimeout(ms, undefined, { signal: this.stopping.signal }).catch(() => {});
  }

  private groupReady = false;

  /** The group reads the log from its start, so records appended before any meter ran count too. */
  private async ensureGroup() {
    if (this.groupReady) return;
    await this.redis.xgroup("CREATE", this.key, GROUP, "0", "MKSTREAM").catch((error: unknown) => {
      if (!String(error).includes("BUSYGROUP")) throw error;
    });
    this.groupReady = true;
  }

  /**
   * One statement for the batch; when the database refuses it for its data, one per record, so
   * that a record it will never take (it breaks a check the log's schema does not know) is
   * dropped, logged, without holding the others back.
   */
  private async insert(records: UsageRecord[]) {
    const written = new Set<string>();
    const taken = ({ written: ids, late }: Awaited<ReturnType<typeof insertUsageRecords>>) => {
      for (const id of ids) written.add(id);
      // Its day was rolled up (usage-rollup.ts): it may be counted there already, so it is not written.
      for (const record of late) this.log.error("dropped a usage record of a day already rolled up", { record });
    };
    try {
      taken(await insertUsageRecords(this.db, records));
    } catch (error) {
      if (!isRefusedData(error)) throw error;
      for (const record of records) {
        await insertUsageRecords(this.db, [record]).then(taken, (refused: unknown) => {
          if (!isRefusedData(refused)) throw refused;
          this.log.error("dropped a usage record the database refuses", { record, error: String(refused) });
        });
      }
    }
    if (written.size > 0) this.options.onWritten?.(records.filter((r) => written.has(r.requestId)));
  }

  private async write(entries: readonly StreamEntry[]) {
    const records = new Map<string, UsageRecord>();
    for (const [id, fields] of entries) {
      // A request's first record counts, as in the database: a later one is not even parsed.
      const named = usageEntryRequest(fields ?? []);
      if (named !== undefined && records.has(named)) continue;
      const record = readUsageEntry(fields ?? []);
      if (!record) this.log.warn("dropped an entry of the usage log that is not a usage record", { id });
      else if (!records.has(record.requestId)) records.set(record.requestId, record);
    }
    await this.insert([...records.values()]);
    const ids = entries.map(([id]) => id);
    await this.redis
      .multi()
      .xack(this.key, GROUP, ...ids)
      .xdel(this.key, ...ids)
      .exec();
  }
}
