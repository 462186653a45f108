import crypto from "node:crypto";
import { Redis } from "ioredis";
import type { UsageRecord } from "../../src/domain/usage.js";
import { appendUsage, usageLogKey } from "../../src/requests/usage-log.js";
import type { HearthCluster } from "./hearth-cluster.js";
import { metricSamples, sumOf } from "./metric-samples.js";
import { cpuSeconds } from "./process-stats.js";

/** What the bench reads of a Hearth's usage metering (docs/usage.md): its log, its meter's counters, its cost. */

/** What an API's meter reports on /metrics: its writes, the records they added, and the sum of their delays. */
export interface MeterCounters {
  writes: number;
  records: number;
  delayS: number;
}

export const NO_METER: MeterCounters = { writes: 0, records: 0, delayS: 0 };

export function meterCounters(metrics: string): MeterCounters {
  return {
    writes: sumOf(metricSamples(metrics, "hearth_usage_write_records_count")),
    records: sumOf(metricSamples(metrics, "hearth_usage_write_records_sum")),
    delayS: sumOf(metricSamples(metrics, "hearth_usage_write_delay_seconds_sum")),
  };
}

export const difference = (a: MeterCounters, b: MeterCounters): MeterCounters => ({
  writes: a.writes - b.writes,
  records: a.records - b.records,
  delayS: a.delayS - b.delayS,
});

export const add = (a: MeterCounters, b: MeterCounters): MeterCounters => ({
  writes: a.writes + b.writes,
  records: a.records + b.records,
  delayS: a.delayS + b.delayS,
});

/** The longest the bench waits for a meter to empty the usage log. */
const DRAIN_WAIT_MS = 10_000;

/** What the meter alone costs, and what appending a request's record costs its appenders. */
export interface MeterAlone {
  /** Requests whose record was appended, each twice (as a text answer's is). */
  records: number;
  /** From the first append to the log found empty. */
  seconds: number;
  /** The API's CPU seconds over that time, and what it uses idle over as long. */
  apiCpuS: number;
  idleCpuS: number;
  /** The meter's CPU per request's record written (read twice): the API's CPU less its idle rate's. */
  meterMsPerRecord: number;
  /** The bench's CPU per request for its two appends (appendUsage), as its API process and worker make them. */
  appendMsPerRecord: number;
}

/** A Hearth's usage log: its length sampled, waited on until empty, and the meter's cost alone. */
export class UsageLog {
  readonly lengths: number[] = [];
  private readonly redis: Redis;
  private readonly key: string;

  constructor(private readonly cluster: HearthCluster) {
    this.redis = new Redis(cluster.redisUrl);
    this.key = usageLogKey(cluster.prefix);
  }

  /** Samples the log's length every `ms` until the returned function is called. */
  sample(ms: number): () => void {
    const timer = setInterval(() => {
      this.redis.xlen(this.key).then(
        (n) => this.lengths.push(n),
        () => {},
      );
    }, ms);
    return () => clearInterval(timer);
  }

  /** Waits until the meter has written every record (the log is empty), DRAIN_WAIT_MS at most, `atLeastMs` in all. */
  async drained(atLeastMs = 0): Promise<void> {
    const started = Date.now();
    const deadline = started + DRAIN_WAIT_MS;
    while ((await this.redis.xlen(this.key)) > 0 && Date.now() < deadline) await sleep(50);
    await sleep(started + atLeastMs - Date.now());
  }

  /**
   * The meter alone, on a Hearth with nothing else to do: `count` records of a made-up account
   * appended at once, each twice in a row as the API process relaying a text answer and its
   * worker append it (docs/usage.md; the meter takes 500 entries to a write), the API's CPU time
   * until the log is empty, less its idle use over as long (measured just before, for `idleMs`).
   */
  async meterAlone(count: number, model: string, idleMs = 1_000): Promise<MeterAlone> {
    const pid = this.cluster.apiPid;
    const idle0 = await cpuSeconds(pid);
    const idleStart = performance.now();
    await sleep(idleMs);
    const idleRate = ((await cpuSeconds(pid)) - idle0) / ((performance.now() - idleStart) / 1000);
    const run = crypto.randomBytes(4).toString("hex");
    const now = Date.now();
    const records = Array.from({ length: count }, (_, i) => madeUpRecord(`bench-meter-${run}-${i}`, model, now));
    const api0 = await cpuSeconds(pid);
    const started = performance.now();
    const own = process.cpuUsage();
    await Promise.all(records.flatMap((r) => [r, r]).map((r) => appendUsage(this.redis, this.cluster.prefix, r)));
    const appended = process.cpuUsage(own);
    await this.drained();
    const seconds = (performance.now() - started) / 1000;
    const apiCpuS = (await cpuSeconds(pid)) - api0;
    const idleCpuS = idleRate * seconds;
    return {
      records: count,
      seconds,
      apiCpuS,
      idleCpuS,
      meterMsPerRecord: ((apiCpuS - idleCpuS) / count) * 1000,
      appendMsPerRecord: (appended.user + appended.system) / 1000 / count,
    };
  }

  close() {
    this.redis.disconnect();
  }
}

function madeUpRecord(requestId: string, model: string, now: number): UsageRecord {
  return {
    requestId,
    accountId: "bench-meter-probe",
    keyId: "bench",
    model,
    baseModelId: "hearth-tiny",
    kind: "completion",
    promptTokens: 10,
    cachedTokens: 0,
    completionTokens: 32,
    images: 0,
    imageSteps: 0,
    imagePixels: 0,
    startedAt: now - 100,
    endedAt: now,
    outcome: "finished",
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
