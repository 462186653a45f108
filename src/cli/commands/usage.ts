import type { UsageReport } from "../../api/contract/management/usage-routes.js";
import { examples, withContext, type Verbs } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { usageError } from "../exit-codes.js";
import { table } from "../output.js";
import { timeOption } from "../time-option.js";

const GROUPINGS = ["model", "key", "day"] as const;

interface UsageOptions {
  since: string;
  until?: string;
  by: string;
}

/** `hearth get usage`: what the account used over a period, from its usage records (docs/usage.md). */
export function registerUsageCommands({ get }: Verbs): void {
  examples(
    get
      .command("usage")
      .description(
        "Show the account's usage: requests, tokens (cached apart) and images by model, key or day; deployed hours",
      )
      .option("--since <when>", "the period's start: a span back from now (7d, 12h) or a time", "30d")
      .option("--until <when>", "the period's end: a span back from now or a time; default now")
      .option("--by <group>", `sum by ${GROUPINGS.join(", ")}`, "model")
      .action(withContext(showUsage)),
    ["hearth get usage", "hearth get usage --since 7d --by day", "hearth get usage --by key --output json"],
  );
}

async function showUsage(ctx: CliContext, options: UsageOptions) {
  if (!(GROUPINGS as readonly string[]).includes(options.by)) {
    throw usageError(`Invalid --by "${options.by}": use one of ${GROUPINGS.join(", ")}.`);
  }
  const now = Date.now();
  const start = new Date(timeOption("--since", options.since, "ago", now)).toISOString();
  const end =
    options.until === undefined ? undefined : new Date(timeOption("--until", options.until, "ago", now)).toISOString();
  const usage = await ctx.client().getUsage(await ctx.accountId(), {
    start,
    ...(end === undefined ? {} : { end }),
    groupBy: options.by as UsageReport["groupBy"],
  });
  ctx.out.result(
    usage,
    () => usageLines(ctx, usage),
    () => usage.groups.map((g) => g.group),
  );
}

function usageLines(ctx: CliContext, usage: UsageReport): string[] {
  const period = `${usage.startTime.slice(0, 16).replace("T", " ")} – ${usage.endTime.slice(0, 16).replace("T", " ")} UTC`;
  const head = `Usage of account "${usage.accountId}", ${period}, by ${usage.groupBy}:`;
  // Costs only where the operator set prices.
  const costHeader = usage.currency === null ? [] : [`COST (${usage.currency})`];
  const costCell = (cost: number | undefined) => (usage.currency === null ? [] : [(cost ?? 0).toFixed(4)]);
  const deployed =
    usage.deployments.length === 0
      ? []
      : [
          "",
          ...table(
            ctx.out,
            ["DEPLOYED MODEL", "HOURS", ...costHeader],
            usage.deployments.map((d) => [d.model, d.deployedHours.toFixed(2), ...costCell(d.cost)]),
          ),
        ];
  const bill =
    usage.cost === undefined
      ? []
      : ["", `Cost: ${usage.cost.toFixed(4)} ${usage.currency} (requests and deployed hours)`];
  if (usage.groups.length === 0) return [head, "(no requests)", ...deployed, ...bill];
  const row = (group: string, t: UsageReport["total"]) => [
    group,
    String(t.requests),
    String(t.promptTokens),
    String(t.cachedTokens),
    String(t.completionTokens),
    String(t.images),
    ...costCell(t.cost),
  ];
  return [
    head,
    ...table(
      ctx.out,
      [
        usage.groupBy.toUpperCase(),
        "REQUESTS",
        "PROMPT TOKENS",
        "CACHED",
        "COMPLETION TOKENS",
        "IMAGES",
        ...costHeader,
      ],
      [...usage.groups.map((g) => row(g.group, g)), row("TOTAL", usage.total)],
    ),
    ...deployed,
    ...bill,
  ];
}
