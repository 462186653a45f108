import type { UsageSummary } from "../services/usage-reports.js";
import { Table } from "./table.js";
import { SERIES_COLOURS, UsageChart } from "./usage-chart.js";

/** The periods the pages offer, in days; the first page shows the default. */
export const USAGE_PERIODS = [7, 30, 90] as const;
export const DEFAULT_PERIOD = 30;

const DAY_MS = 86_400_000;

/** `?days=` as one of the periods offered, else the default. */
export function periodDays(query: string | undefined): number {
  const days = Number(query);
  return (USAGE_PERIODS as readonly number[]).includes(days) ? days : DEFAULT_PERIOD;
}

/** The last `days` whole UTC days, today included: [start, end) as RFC 3339 times. */
export function dailyPeriod(days: number, now: number): { start: string; end: string } {
  const tomorrow = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  return { start: new Date(tomorrow - days * DAY_MS).toISOString(), end: new Date(tomorrow).toISOString() };
}

/**
 * An account's usage over a period, from a report by day and model (UsageReports, as the API
 * answers it): links to the other periods, the chart, its figures as a table, the totals, the
 * deployed hours, and costs where the operator set prices.
 */
export function UsageSection(props: { report: UsageSummary; days: number; path: string }) {
  const { report, days, path } = props;
  const dayList: string[] = [];
  for (let t = report.start.getTime(); t < report.end.getTime(); t += DAY_MS) {
    dayList.push(new Date(t).toISOString().slice(0, 10));
  }
  const models = [...new Set(report.groups.map((g) => g.model!))].sort();
  const priced = report.currency !== null;
  const money = (cost: number | undefined) => (
    <data value={String(cost ?? 0)}>{formatCost(cost ?? 0, report.currency!)}</data>
  );
  const tokensOf = (g: { promptTokens: number; completionTokens: number }) => g.promptTokens + g.completionTokens;
  return (
    <>
      <nav class="row small" aria-label="Period">
        <span class="muted">Period:</span>
        {USAGE_PERIODS.map((d) => (
          <a href={`${path}?days=${d}`} aria-current={d === days ? "page" : undefined}>
            {d} days
          </a>
        ))}
      </nav>
      <p class="muted small usage-period">
        From <time datetime={report.start.toISOString()}>{report.start.toISOString().slice(0, 10)}</time> to{" "}
        <time datetime={report.end.toISOString()}>{report.end.toISOString().slice(0, 10)}</time> (UTC, the end
        excluded), by the requests' end.
      </p>
      <dl class="facts totals">
        <dt>Requests</dt>
        <dd>{number(report.total.requests)}</dd>
        <dt>Prompt tokens</dt>
        <dd>
          {number(report.total.promptTokens)}{" "}
          <span class="muted small">({number(report.total.cachedTokens)} of them cached)</span>
        </dd>
        <dt>Completion tokens</dt>
        <dd>{number(report.total.completionTokens)}</dd>
        <dt>Images</dt>
        <dd>{number(report.total.images)}</dd>
        {priced && (
          <>
            <dt>Cost</dt>
            <dd>
              {money(report.cost)}{" "}
              {report.deployments.length > 0 && (
                <span class="muted small">(the requests {money(report.total.cost)}, the rest deployed hours)</span>
              )}
            </dd>
          </>
        )}
      </dl>
      {report.groups.length === 0 ? (
        <p class="muted">No usage in this period.</p>
      ) : (
        <figure class="usage-chart">
          <UsageChart
            id={`usage-chart-${days}`}
            days={dayList}
            models={models}
            cells={report.groups.map((g) => ({ day: g.day!, model: g.model!, tokens: tokensOf(g) }))}
          />
          <figcaption>
            <ul class="legend">
              {models.map((model, i) => (
                <li>
                  <span class={`swatch series-${i % SERIES_COLOURS}`} aria-hidden="true" />
                  {model}
                </li>
              ))}
            </ul>
          </figcaption>
        </figure>
      )}
      {report.groups.length > 0 && (
        <Table
          caption="Each day's usage by model: the chart's figures (its tokens: prompt + completion)"
          headers={[
            "Day",
            "Model",
            "Requests",
            "Prompt",
            "Cached",
            "Completion",
            "Images",
            ...(priced ? [`Cost (${report.currency})`] : []),
          ]}
          rows={report.groups.map((g) => [
            <span class="nowrap">{g.day}</span>,
            <span class="small">{g.model}</span>,
            number(g.requests),
            number(g.promptTokens),
            number(g.cachedTokens),
            number(g.completionTokens),
            number(g.images),
            ...(priced ? [money(g.cost)] : []),
          ])}
        />
      )}
      {report.deployments.length > 0 && (
        <Table
          caption="Deployed hours"
          headers={["Model", "Hours", ...(priced ? [`Cost (${report.currency})`] : [])]}
          rows={report.deployments.map((d) => [
            <span class="small">{d.model}</span>,
            d.deployedHours.toFixed(2),
            ...(priced ? [money(d.cost)] : []),
          ])}
        />
      )}
    </>
  );
}

/** A count as the pages show it: 12,345. */
export function number(n: number) {
  return <data value={String(n)}>{n.toLocaleString("en-US")}</data>;
}

function formatCost(amount: number, currency: string): string {
  return new Intl.NumberFormat("en-US", { style: "currency", currency, maximumFractionDigits: 4 }).format(amount);
}
