import type { Caller } from "../../domain/caller.js";
import type { Db } from "../../db/client.js";
import { getAccount } from "../../db/queries/accounts.js";
import { deployedHours, usageByGroup, type UsageGrouping, type UsageTotals } from "../../db/queries/usage.js";
import { modelName } from "../../domain/model-name.js";
import { AppError } from "../../errors.js";
import { accountNotFound } from "./model-catalog.js";

/** The default period: the last 30 days. */
const DEFAULT_DAYS = 30;

export interface UsagePeriod {
  start?: string;
  end?: string;
  groupBy: UsageGrouping;
}

export interface UsageSummary {
  accountId: string;
  start: Date;
  end: Date;
  groupBy: UsageGrouping;
  groups: (UsageTotals & { group: string })[];
  total: UsageTotals;
  /** The hours each of the account's models was deployed in the period (those deployed at some time in it). */
  deployments: { model: string; deployedHours: number }[];
}

/**
 * An account's usage over a period, from its usage records (docs/usage.md): one's own account
 * with a key of the models or admin scope, any account with an admin key. Another account
 * answers a non-admin exactly like a missing one.
 */
export class UsageReports {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async report(caller: Caller, accountId: string, period: UsagePeriod): Promise<UsageSummary> {
    const admin = caller.scopes.includes("admin");
    if (accountId !== caller.accountId) {
      if (!admin || !(await getAccount(this.db, accountId))) throw accountNotFound(accountId);
    } else if (!admin && !caller.scopes.includes("models")) {
      throw new AppError(
        "forbidden",
        `Reading usage needs a key with the models or the admin scope; this key has ${caller.scopes.join(", ")}.`,
      );
    }
    const end = period.end === undefined ? new Date(this.now()) : new Date(period.end);
    const start =
      period.start === undefined ? new Date(end.getTime() - DEFAULT_DAYS * 86_400_000) : new Date(period.start);
    if (end.getTime() <= start.getTime()) {
      throw new AppError("invalid_request", "end must be after start.", { param: "end" });
    }
    const [groups, hours] = await Promise.all([
      usageByGroup(this.db, accountId, { start, end }, period.groupBy),
      deployedHours(this.db, accountId, { start, end }, new Date(this.now())),
    ]);
    const deployments = hours.map((h) => ({ model: modelName(accountId, h.modelId), deployedHours: h.hours }));
    return { accountId, start, end, groupBy: period.groupBy, groups, total: sumOf(groups), deployments };
  }
}

function sumOf(groups: readonly UsageTotals[]): UsageTotals {
  const total: UsageTotals = {
    requests: 0,
    promptTokens: 0,
    cachedTokens: 0,
    completionTokens: 0,
    images: 0,
    imageSteps: 0,
    imagePixels: 0,
  };
  for (const g of groups) for (const field of Object.keys(total) as (keyof UsageTotals)[]) total[field] += g[field];
  return total;
}
