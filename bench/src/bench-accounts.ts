import type { BenchHttp } from "./http-client.js";

/**
 * A new account of the bench's Hearth, through the admin API, with `inFlight` as its cap on
 * requests queued or running (high enough for the scenario's load): a key of its own.
 */
export async function benchAccount(admin: BenchHttp, id: string, inFlight: number): Promise<string> {
  await admin.postJson("/v1/admin/accounts", { accountId: id });
  const patched = await admin.patchJson(`/v1/admin/accounts/${id}`, { limits: { maxInFlightRequests: inFlight } });
  if (patched.status !== 200) throw new Error(`could not set ${id}'s limits: ${JSON.stringify(patched.body)}`);
  const issued = await admin.postJson(`/v1/admin/accounts/${id}/api-keys`, { scopes: ["inference"] });
  if (issued.status !== 200) throw new Error(`could not make a key for ${id}: ${JSON.stringify(issued.body)}`);
  return (issued.body as { key: string }).key;
}
