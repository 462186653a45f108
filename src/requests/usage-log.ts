import type { Logger } from "../logger.js";
import { withTimeout } from "../process/with-timeout.js";
import type { RedisClient } from "../redis/connection.js";
import { usageRecordSchema, type UsageOutcome, type UsageRecord } from "../domain/usage.js";
import type { ImagePayload, InferencePayload } from "../jobs/jobs.js";
import type { Usage } from "./stream.js";

/**
 * The usage log: a Redis Stream where the worker that ran a request appends its usage record
 * as the request ends, and from which the meter of the API processes writes them to the
 * database in batches (control/usage-meter.ts, docs/usage.md). The stream holds a record until
 * a meter has written it, through any API process's restart. The API process that relays a
 * request appends from what it relayed (relayed-usage.ts): a text answer's record as its done
 * comes, and the record of a request whose worker died before its answer was whole. A record
 * appended twice counts once.
 */
export const usageLogKey = (prefix: string) => `${prefix}:usage:{log}`;

/** The field each entry keeps its record in, as JSON. */
const FIELD = "r";
/**
 * The field that names the entry's request: a text answer's record is appended twice (by its
 * API process and its worker), and the meter reads the second's ID without parsing its record.
 */
const REQUEST_FIELD = "id";

export async function appendUsage(redis: RedisClient, prefix: string, record: UsageRecord): Promise<void> {
  await redis.xadd(usageLogKey(prefix), "*", REQUEST_FIELD, record.requestId, FIELD, JSON.stringify(record));
}

/** The longest an append may take: with Redis gone it could wait for ever, and its job or request with it. */
const APPEND_WAIT_MS = 5_000;

/**
 * Appends a record, within APPEND_WAIT_MS; one that cannot be is lost, and the log says so.
 * Resolves to whether it was appended.
 */
export async function appendUsageOrLog(
  redis: RedisClient,
  prefix: string,
  record: UsageRecord,
  log: Logger | undefined,
): Promise<boolean> {
  return withTimeout(appendUsage(redis, prefix, record), APPEND_WAIT_MS).then(
    () => true,
    (error: unknown) => {
      log?.error("could not append a usage record: this request may not be metered", {
        requestId: record.requestId,
        error: String(error),
      });
      return false;
    },
  );
}

/** The request an entry names, read without its record; undefined for an entry that names none. */
export function usageEntryRequest(fields: readonly string[]): string | undefined {
  return fieldValue(fields, REQUEST_FIELD);
}

/** An entry's record, or undefined for one that is not a record (written by something else: dropped). */
export function readUsageEntry(fields: readonly string[]): UsageRecord | undefined {
  const json = fieldValue(fields, FIELD);
  if (json === undefined) return undefined;
  try {
    const parsed = usageRecordSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The value of an entry's field `name` (fields and values alternate). */
function fieldValue(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** Whom and what a job's record names: its request, account, key, model and kind. */
export type UsageSubject = Pick<
  UsageRecord,
  "requestId" | "accountId" | "keyId" | "model" | "baseModelId" | "adapter" | "kind"
>;

/** A job's usage subject; undefined for a job that names nobody to meter. */
export function usageSubjectOf(payload: InferencePayload | ImagePayload): UsageSubject | undefined {
  if (!payload.meter) return undefined;
  return {
    requestId: payload.requestId,
    ...payload.meter,
    model: payload.model.name,
    baseModelId: payload.model.baseModelId,
    ...(payload.model.adapter ? { adapter: payload.model.adapter.key } : {}),
    kind: "kind" in payload ? payload.kind : "image",
  };
}

/**
 * The record of text cut short by a failure (an error, or its worker's death): the prompts it
 * read, and the completion tokens its client was sent, which are those of `sent` (the usage on
 * the last event that went out) when the client reads a stream, and none when it waits for the
 * whole answer, which it never gets.
 */
export function cutShortRecord(
  subject: UsageSubject,
  sent: Usage,
  streamed: boolean,
  startedAt: number,
  endedAt: number,
): UsageRecord {
  return textRecord(subject, { ...sent, completionTokens: streamed ? sent.completionTokens : 0 }, "failed", {
    startedAt,
    endedAt,
  });
}

/** A record of text (no images) with these counts. */
export function textRecord(
  subject: UsageSubject,
  usage: Usage,
  outcome: UsageOutcome,
  times: { startedAt: number; endedAt: number },
): UsageRecord {
  return {
    ...subject,
    promptTokens: usage.promptTokens,
    cachedTokens: usage.cachedTokens ?? 0,
    completionTokens: usage.completionTokens,
    images: 0,
    imageSteps: 0,
    imagePixels: 0,
    ...times,
    outcome,
  };
}
