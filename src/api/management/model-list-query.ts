import { MODEL_ID_PATTERN, MODEL_KINDS, MODEL_STATES } from "../../domain/vocabulary.js";
import type { ListModelsFilter } from "../../db/queries/models.js";
import { AppError } from "../../errors.js";

/** The list query's page tokens and filter language (its schema is in contract/management/requests.ts). */

/** Page tokens are opaque to clients: the last model ID of the previous page. */
export const pageTokens = {
  encode: (lastModelId: string) => Buffer.from(JSON.stringify({ after: lastModelId })).toString("base64url"),
  decode(token: string): string {
    try {
      const { after } = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { after?: unknown };
      if (typeof after === "string" && MODEL_ID_PATTERN.test(after)) return after;
    } catch {
      // fall through
    }
    throw new AppError("invalid_request", "Invalid pageToken: pass the nextPageToken of a previous page.", {
      param: "pageToken",
    });
  },
};

const FILTER_TERM = /^(state|kind|baseModel)\s*=\s*"?([A-Za-z0-9/_-]+)"?$/;

/**
 * A small filter language: `field=value` terms joined by AND (or spaces), over
 * `state` (UPLOADING, VALIDATING, READY, FAILED), `kind` (base, lora) and `baseModel`.
 */
export function parseModelFilter(text: string | undefined): ListModelsFilter {
  const filter: ListModelsFilter = {};
  if (!text?.trim()) return filter;
  const bad = (why: string) =>
    new AppError(
      "invalid_request",
      `Invalid filter ${JSON.stringify(text)}: ${why}. Example: state=READY AND kind=lora.`,
      {
        param: "filter",
      },
    );
  for (const term of text.trim().split(/\s+AND\s+|\s*&&\s*|\s+(?=\w+\s*=)/i)) {
    const match = FILTER_TERM.exec(term.trim());
    if (!match) throw bad(`cannot read ${JSON.stringify(term)}; terms are field=value over state, kind and baseModel`);
    const [, field, value] = match as unknown as [string, "state" | "kind" | "baseModel", string];
    if (field === "state") {
      const state = value.toUpperCase();
      if (!(MODEL_STATES as readonly string[]).includes(state)) throw bad(`state is one of ${MODEL_STATES.join(", ")}`);
      filter.state = state as ListModelsFilter["state"];
    } else if (field === "kind") {
      if (!(MODEL_KINDS as readonly string[]).includes(value)) throw bad(`kind is one of ${MODEL_KINDS.join(", ")}`);
      filter.kind = value as ListModelsFilter["kind"];
    } else {
      filter.baseModel = value;
    }
  }
  return filter;
}
