import { describe, expect, it } from "vitest";
import type { InferencePayload } from "../../src/jobs/jobs.js";
import type { StreamEvent } from "../../src/requests/stream.js";
import { type JobEnding, JobUsage } from "../../src/workers/usage-report.js";
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

const text = (completionTokens: number): StreamEvent => ({
  type: "token",
  index: 0,
  text: "x",
  usage: { promptTokens: 6, cachedTokens: 2, completionTokens },
});
const done = (finishReason: "length" | "cancelled", completionTokens: number): StreamEvent => ({
  type: "done",
  choices: [{ index: 0, finishReason }],
  usage: { promptTokens: 6, cachedTokens: 2, completionTokens },
});
const ended = (how: Partial<JobEnding> = {}): JobEnding => ({
  cancelled: false,
  orphaned: false,
  startedAt: 1,
  endedAt: 2,
  ...how,
});

/** A job that produced 9 tokens' events, of which an API process received those up to the 5th. */
function job(streamed?: boolean, end?: StreamEvent) {
  const usage = new JobUsage(payload(streamed));
  for (const n of [1, 5, 9]) usage.emitted(text(n));
  usage.published(text(1), 1);
  usage.published(text(5), 1);
  usage.published(text(9), 0); // nobody listened
  if (end) usage.emitted(end);
  return usage;
}
const counts = (usage: JobUsage, ending: JobEnding) => {
  const r = usage.record(ending);
  return [r?.outcome, r?.promptTokens, r?.cachedTokens, r?.completionTokens];
};

describe("a job's usage record", () => {
  it("counts a finished job by its done", () => {
    expect(counts(job(undefined, done("length", 12)), ended())).toEqual(["finished", 6, 2, 12]);
  });

  it("counts all a job cancelled by its client produced, streamed or not", () => {
    expect(counts(job(undefined, done("cancelled", 10)), ended({ cancelled: true }))).toEqual(["cancelled", 6, 2, 10]);
    expect(counts(job(false), ended({ cancelled: true }))).toEqual(["cancelled", 6, 2, 9]);
  });

  it("counts a failure by what an API process received: a stream's text, an unstreamed answer's prompt only", () => {
    expect(counts(job(), ended())).toEqual(["failed", 6, 2, 5]);
    expect(counts(job(false), ended())).toEqual(["failed", 6, 2, 0]);
    // Orphaned (its API process died): a failure too, whatever its done said.
    expect(counts(job(undefined, done("cancelled", 10)), ended({ cancelled: true, orphaned: true }))).toEqual([
      "failed",
      6,
      2,
      5,
    ]);
    expect(counts(new JobUsage(payload()), ended())).toEqual(["failed", 0, 0, 0]);
  });

  it("counts a finished job whose done reached no API process (it died) by what reached one", () => {
    const usage = job(undefined, done("length", 12));
    usage.published(done("length", 12), 0);
    expect(counts(usage, ended())).toEqual(["failed", 6, 2, 5]);
  });

  it("meters nobody for a job without a meter tag", () => {
    const untagged = new JobUsage({ ...payload(), meter: undefined } as unknown as InferencePayload);
    untagged.emitted(done("length", 3));
    expect(untagged.record(ended())).toBeUndefined();
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
