import type { BenchHttp } from "./http-client.js";
import type { StepTimes } from "./step-times.js";

/**
 * The samples of one metric in Prometheus's text format (the API's /metrics, which carries
 * the workers' too), whose labels include every `labels` pair: the bench reads counters and
 * gauges it needs from there.
 */
export function metricSamples(text: string, name: string, labels: Record<string, string> = {}): number[] {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const samples: number[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((pair) => line.includes(pair))) samples.push(Number(line.split(" ").pop()));
  }
  return samples;
}

export const sumOf = (samples: number[]) => samples.reduce((sum, v) => sum + v, 0);

/** Workers send their metrics with each heartbeat (every 2 s): the bench reads them after one more. */
const HEARTBEAT_WAIT_MS = 2_500;

/** The API's /metrics once the workers' last heartbeat is in. */
export async function metricsAfterHeartbeat(http: BenchHttp): Promise<string> {
  await new Promise((r) => setTimeout(r, HEARTBEAT_WAIT_MS));
  return http.getText("/metrics");
}

/** The samples of one metric summed by the value of one of their labels (e.g. by worker, by reason). */
export function metricSumsBy(text: string, name: string, label: string): Record<string, number> {
  const sums: Record<string, number> = {};
  const pattern = new RegExp(`[{,]${label}="([^"]*)"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const value = pattern.exec(line)?.[1];
    if (value !== undefined) sums[value] = (sums[value] ?? 0) + Number(line.split(" ").pop());
  }
  return sums;
}

/** The workers' generation steps of `modelId` (its last name part) so far, once their last heartbeat is in. */
export async function workerStepsAfterHeartbeat(http: BenchHttp, modelId: string): Promise<StepTimes> {
  const text = await metricsAfterHeartbeat(http);
  const read = (name: string, labels: Record<string, string> = {}) =>
    sumOf(metricSamples(text, name, { model: modelId, ...labels }));
  const between = (part: string) => read("hearth_worker_step_between_seconds_sum", { part });
  return {
    steps: read("hearth_worker_decode_step_sequences_count"),
    sequences: read("hearth_worker_decode_step_sequences_sum"),
    passes: read("hearth_worker_decode_step_passes_sum"),
    decodeSeconds: read("hearth_worker_decode_step_seconds_sum"),
    followed: read("hearth_worker_step_between_seconds_count", { part: "sampling" }),
    beforeSamplingSeconds: between("before_sampling"),
    samplingSeconds: between("sampling"),
    afterSamplingSeconds: between("after_sampling"),
  };
}
