import { describe, expect, it } from "vitest";
import type { InferencePayload } from "../../src/jobs/jobs.js";
import type { StreamEvent } from "../../src/requests/stream.js";
import { usageRecordOf } from "../../src/workers/usage-report.js";
import { usageOf } from "../../src/workers/usage-tally.js";

const payload = (streamed?: boolean) =>
  ({
    kind: "completion",
    requestId: "req-1",
    replyTo: "reply",
    model: { name: "accounts/hearth/models/hearth-tiny", baseModelId: "hearth-tiny" },
    meter: { accountId: "a", keyId: "k" },
    prompts: ["hi"],
    n: 1,
    ...(streamed === undefined ? {} : { streamed }),
  }) as unknown as InferencePayload;

const sent = { promptTokens: 6, cachedTokens: 2, completionTokens: 9 };
const done: Extract<StreamEvent, { type: "done" }> = {
  type: "done",
  choices: [{ index: 0, finishReason: "length" }],
  usage: { promptTokens: 6, cachedTokens: 2, completionTokens: 12 },
};
const counts = (record: ReturnType<typeof usageRecordOf>) => ({
  promptTokens: record?.promptTokens,
  cachedTokens: record?.cachedTokens,
  completionTokens: record?.completionTokens,
  outcome: record?.outcome,
});

describe("a job's usage record", () => {
  it("counts a done's usage, whatever was sent before", () => {
    expect(counts(usageRecordOf(payload(), done, sent, "finished", 1, 2))).toEqual({
      ...done.usage,
      outcome: "finished",
    });
  });

  it("counts a failure's streamed text by the usage on its last event, and an unstreamed one's prompt only", () => {
    expect(counts(usageRecordOf(payload(), undefined, sent, "failed", 1, 2))).toEqual({ ...sent, outcome: "failed" });
    expect(counts(usageRecordOf(payload(false), undefined, sent, "failed", 1, 2))).toEqual({
      ...sent,
      completionTokens: 0,
      outcome: "failed",
    });
  });

  it("counts all a cancelled job produced, streamed or not, and nothing for a job that sent no text", () => {
    expect(counts(usageRecordOf(payload(false), undefined, sent, "cancelled", 1, 2))).toEqual({
      ...sent,
      outcome: "cancelled",
    });
    expect(counts(usageRecordOf(payload(), undefined, undefined, "failed", 1, 2))).toEqual({
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
      outcome: "failed",
    });
  });

  it("meters nobody for a job without a meter tag", () => {
    const untagged = { ...payload(), meter: undefined } as unknown as InferencePayload;
    expect(usageRecordOf(untagged, done, sent, "finished", 1, 2)).toBeUndefined();
  });
});

describe("a request's usage from its choices", () => {
  it("counts each prompt once (its first choice's) and every choice's completion tokens", () => {
    const choice = (promptTokens: number, completionTokens: number) => ({
      promptTokens,
      cachedTokens: 1,
      completionTokens,
    });
    // Two prompts, n = 2: choices 0 and 1 share the first prompt, 2 and 3 the second; choice 3 has not started.
    expect(usageOf([choice(5, 3), choice(5, 4), choice(7, 2), undefined], 2)).toEqual({
      promptTokens: 12,
      cachedTokens: 2,
      completionTokens: 9,
    });
  });
});
