import type { Caller } from "../../domain/caller.js";
import type { Db } from "../../db/client.js";
import { getAccount } from "../../db/queries/accounts.js";
import {
  deployedHours,
  usageByAccount,
  usageByGroup,
  usageRecordsPage,
  type UsageGrouping,
  type UsageTotals,
} from "../../db/queries/usage.js";
import type { UsageRow } from "../../db/schema/usage.js";
import { modelName } from "../../domain/model-name.js";
import { AppError } from "../../errors.js";
import { accountNotFound } from "./model-catalog.js";
import { priceOf, usageCost } from "./usage-costs.js";
import type { Prices } from "../../config/prices.js";
import { getModel } from "../../db/queries/models.js";

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
  /** The prices' currency; null when the operator set none (costs are then absent). */
  currency: string | null;
  groups: Costed<UsageGroupTotals>[];
  total: Costed<UsageTotals>;
  /** The hours each of the account's models was deployed in the period (those deployed at some time in it). */
  deployments: Costed<{ model: string; deployedHours: number }>[];
  /** With prices: the usage's cost and the deployed hours', together. */
  cost?: number;
}

/** With prices, each sum carries what it cost. */
type Costed<T> = T & { cost?: number };

/** One group's sums; by day and model, the day and the model apart too (the group is `<day>/<model>`). */
export type UsageGroupTotals = UsageTotals & { group: string; day?: string; model?: string };

/**
 * An account's usage over a period, from its usage records and their daily totals (docs/usage.md):
 * one's own account with a key of the models or admin scope, any account with an admin key.
 * Another account answers a non-admin exactly like a missing one. With prices (HEARTH_PRICES),
 * costs beside.
 */
export class UsageReports {
  constructor(
    private readonly db: Db,
    private readonly prices: Prices | null,
    private readonly now: () => number = Date.now,
  ) {}

  async report(caller: Caller, accountId: string, period: UsagePeriod): Promise<UsageSummary> {
    const { start, end } = await this.open(caller, accountId, period);
    const [rows, hours] = await Promise.all([
      usageByGroup(this.db, accountId, { start, end }, period.groupBy),
      deployedHours(this.db, accountId, { start, end }, new Date(this.now())),
    ]);
    const { prices } = this;
    const groups = new Map<string, Costed<UsageGroupTotals>>();
    for (const row of rows) {
      // The rows are by model and base model too: a group sums those of its own.
      const { group: rowGroup, model, baseModelId, ...totals } = row;
      const byDayAndModel = period.groupBy === "day_model";
      const group = byDayAndModel ? `${rowGroup}/${model}` : rowGroup;
      const into = groups.get(group) ?? {
        group,
        ...(byDayAndModel ? { day: rowGroup, model } : {}),
        ...zero(),
        ...(prices ? { cost: 0 } : {}),
      };
      add(into, totals);
      if (prices) into.cost! += usageCost(totals, priceOf(prices, model, baseModelId));
      groups.set(group, into);
    }
    const total: Costed<UsageTotals> = { ...zero(), ...(prices ? { cost: 0 } : {}) };
    for (const g of groups.values()) {
      add(total, g);
      if (prices) total.cost! += g.cost!;
    }
    const deployments = await Promise.all(
      hours.map(async (h) => {
        const model = modelName(accountId, h.modelId);
        if (!prices) return { model, deployedHours: h.hours };
        const base = (await getModel(this.db, accountId, h.modelId))?.baseModel;
        const baseId = base ? base.slice(base.lastIndexOf("/") + 1) : "";
        const cost = h.hours * (priceOf(prices, model, baseId)?.perDeployedHour ?? 0);
        return { model, deployedHours: h.hours, cost };
      }),
    );
    return {
      accountId,
      start,
      end,
      groupBy: period.groupBy,
      currency: prices?.currency ?? null,
      groups: [...groups.values()],
      total,
      deployments,
      ...(prices ? { cost: total.cost! + deployments.reduce((sum, d) => sum + (d.cost ?? 0), 0) } : {}),
    };
  }

  /** Every account's usage totals over [start, end), for the operators (an admin key only). */
  async byAccount(caller: Caller, range: { start: Date; end: Date }): Promise<Map<string, UsageTotals>> {
    if (!caller.scopes.includes("admin")) {
      throw new AppError("forbidden", "Every account's usage is for operators: a key with the admin scope.");
    }
    const rows = await usageByAccount(this.db, range);
    return new Map(rows.map(({ accountId, ...totals }) => [accountId, totals]));
  }

  /** The account's records of the period, oldest first, read from the database a page at a time. */
  async *records(caller: Caller, accountId: string, period: Omit<UsagePeriod, "groupBy">): AsyncGenerator<UsageRow> {
    const range = await this.open(caller, accountId, period);
    let after: UsageRow | undefined;
    for (;;) {
      const page = await usageRecordsPage(this.db, accountId, range, after, EXPORT_PAGE);
      yield* page;
      if (page.length < EXPORT_PAGE) return;
      after = page.at(-1);
    }
  }

  /** Who may read `accountId`'s usage (a 404 or 403 for others), and the period asked for. */
  private async open(caller: Caller, accountId: string, period: Omit<UsagePeriod, "groupBy">) {
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
    return { start, end };
  }
}

/** Exported a page at a time, so that memory stays bounded however many records there are. */
const EXPORT_PAGE = 1_000;

const zero = (): UsageTotals => ({
  requests: 0,
  promptTokens: 0,
  cachedTokens: 0,
  completionTokens: 0,
  images: 0,
  imageSteps: 0,
  imagePixels: 0,
});

function add(into: UsageTotals, from: UsageTotals) {
  for (const field of Object.keys(zero()) as (keyof UsageTotals)[]) into[field] += from[field];
}
