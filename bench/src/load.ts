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
