import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { usageRecords, type UsageRow } from "../../src/db/schema/usage.js";
import { eventually } from "./eventually.js";
import type { TestHearth } from "./hearth.js";
import type { SseEvent } from "./sse.js";

/** The request's usage record, once the meter has written it (exactly one). */
export function recordOf(hearth: TestHearth, requestId: string, timeoutMs = 10_000): Promise<UsageRow> {
  return eventually(async () => {
    const rows = await hearth.api.database.db.select().from(usageRecords).where(eq(usageRecords.requestId, requestId));
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }, timeoutMs);
}

/**
 * The tokens a client received in a completion stream asked with `logprobs` (each token has
 * its entry, in the chunk that completes its text), and the usage chunk's, if one came.
 */
export function tokensReceived(events: readonly SseEvent[]): {
  tokens: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
} {
  let tokens = 0;
  let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  for (const { data } of events) {
    if (!data.startsWith("{")) continue;
    const chunk = JSON.parse(data) as {
      choices?: { logprobs?: { tokens?: string[] } | null }[];
      usage?: { prompt_tokens: number; completion_tokens: number } | null;
    };
    for (const choice of chunk.choices ?? []) tokens += choice.logprobs?.tokens?.length ?? 0;
    usage = chunk.usage ?? usage;
  }
  return { tokens, ...(usage ? { usage } : {}) };
}
