import type { BenchHttp, StreamTiming } from "./http-client.js";

/**
 * Closed-loop load: `clients` concurrent clients, each sending its requests one after
 * the other; the wall time runs from the first request's start to the last one's end.
 */
export async function runClients<T>(
  clients: number,
  requestsPerClient: number,
  request: (client: number, round: number) => Promise<T>,
): Promise<{ results: T[]; wallMs: number }> {
  const results: T[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let round = 0; round < requestsPerClient; round++) results.push(await request(client, round));
    }),
  );
  return { results, wallMs: performance.now() - started };
}

/**
 * Open-ended load: `streams` clients, each streaming request after request until `seconds`
 * have passed since the start; each request's timing, or its error's message.
 */
export async function streamFor(
  http: BenchHttp,
  body: Record<string, unknown>,
  streams: number,
  seconds: number,
): Promise<{ timings: StreamTiming[]; errors: string[]; wallMs: number }> {
  const timings: StreamTiming[] = [];
  const errors: string[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: streams }, async () => {
      while (performance.now() < deadline) {
        try {
          timings.push(await http.stream(body));
        } catch (error) {
          errors.push((error as Error).message);
        }
      }
    }),
  );
  return { timings, errors, wallMs: performance.now() - started };
}
