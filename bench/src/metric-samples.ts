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
