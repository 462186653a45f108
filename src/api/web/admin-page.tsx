import type { Session } from "../../auth/sessions.js";
import type { BatchRow } from "../../db/schema/batches.js";
import type { UsageTotals } from "../../db/queries/usage.js";
import type { AccountResource } from "../contract/management/resources.js";
import type { Overview } from "../services/operations-overview.js";
import { BatchTable } from "./batch-views.js";
import { Layout } from "./layout.js";
import { Table } from "./table.js";
import { number } from "./usage-section.js";

/** `/admin`: what a running Hearth is doing, for its operators, its newest batches, and its accounts' recent usage. */
export function AdminPage(props: {
  session: Session;
  overview: Overview;
  /** Every account, with its usage over the last `days` days (none: it used nothing). */
  accounts: { account: AccountResource; totals?: UsageTotals }[];
  days: number;
  /** Every account's newest batches, and how many open ones no runner holds. */
  batches: { recent: BatchRow[]; unrun: number; now: number };
}) {
  const { workers, deployments, queues } = props.overview;
  return (
    <Layout title="Operations" session={props.session}>
      <h1>Operations</h1>
      <p class="muted">
        Also: <a href="/admin/queues">the queues, job by job</a>
      </p>
      <section aria-labelledby="workers-title">
        <h2 id="workers-title">Workers ({workers.length})</h2>
        {workers.length === 0 ? (
          <p class="notice">No worker has reported in the last seconds: nothing is being served.</p>
        ) : (
          <Table
            headers={["Host · pid", "Roles", "Models", "Adapters loaded", "Busy", "Last heartbeat"]}
            rows={workers.map((w) => [
              <>
                {w.host} · {w.pid}
                <div class="muted small">since {w.startedAt.replace("T", " ").slice(0, 19)} UTC</div>
              </>,
              w.roles.join(", "),
              <span class="small">{w.models.join(", ")}</span>,
              w.adapters,
              w.requests,
              w.heartbeatAgeMs === null ? "—" : `${(w.heartbeatAgeMs / 1000).toFixed(1)} s ago`,
            ])}
          />
        )}
      </section>
      <section aria-labelledby="deployments-title">
        <h2 id="deployments-title">Deployments</h2>
        <p>
          {Object.entries(deployments.byState).map(([state, n]) => (
            <span class="badge spaced">
              {state}: {n}
            </span>
          ))}
        </p>
        {deployments.stuck.length === 0 ? (
          <p class="muted small">
            None stuck (deploying or undeploying for more than {Math.round(deployments.stuckAfterMs / 1000)} s).
          </p>
        ) : (
          <Table
            caption={`Stuck for more than ${Math.round(deployments.stuckAfterMs / 1000)} s`}
            headers={["Model", "State", "For"]}
            rows={deployments.stuck.map((d) => [
              <a href={`/${d.name}`}>{d.name}</a>,
              d.state,
              `${Math.round(d.sinceMs / 1000)} s`,
            ])}
          />
        )}
      </section>
      <section aria-labelledby="queues-title">
        <h2 id="queues-title">Queues</h2>
        <Table
          headers={["Queue", "Waiting", "Oldest waiting", "Running", "Delayed", "Failed"]}
          rows={queues.map((q) => [
            <code>{q.name}</code>,
            q.waiting,
            q.oldestWaitingMs === null ? "—" : `${(q.oldestWaitingMs / 1000).toFixed(1)} s`,
            q.active,
            q.delayed,
            q.failed,
          ])}
        />
      </section>
      <section aria-labelledby="batches-title">
        <h2 id="batches-title">Batches</h2>
        <p class={props.batches.unrun > 0 ? "notice" : "muted small"} role="status">
          {props.batches.unrun === 1 ? "1 open batch" : `${props.batches.unrun} open batches`} nobody runs (no API
          process took {props.batches.unrun === 1 ? "it" : "them"} yet, or the one that did stopped renewing its lease).
        </p>
        <BatchTable
          batches={props.batches.recent}
          operators
          withAccount
          now={props.batches.now}
          caption="The newest, of every account"
        />
      </section>
      <section aria-labelledby="accounts-title">
        <h2 id="accounts-title">Accounts ({props.accounts.length})</h2>
        <Table
          caption={`Usage over the last ${props.days} days (tokens: prompt + completion)`}
          headers={["Account", "Name", "Requests", "Tokens", "Images"]}
          rows={props.accounts.map(({ account, totals }) => [
            <a href={`/admin/accounts/${encodeURIComponent(account.accountId)}`}>{account.accountId}</a>,
            account.displayName,
            number(totals?.requests ?? 0),
            number((totals?.promptTokens ?? 0) + (totals?.completionTokens ?? 0)),
            number(totals?.images ?? 0),
          ])}
        />
      </section>
    </Layout>
  );
}
