import type { Session } from "../../auth/sessions.js";
import type { Overview } from "../services/operations-overview.js";
import { Layout } from "./layout.js";

/** `/admin`: what a running Hearth is doing, for its operators. */
export function AdminPage(props: { session: Session; overview: Overview }) {
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
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Host · pid</th>
                  <th scope="col">Roles</th>
                  <th scope="col">Models</th>
                  <th scope="col">Adapters loaded</th>
                  <th scope="col">Busy</th>
                  <th scope="col">Last heartbeat</th>
                </tr>
              </thead>
              <tbody>
                {workers.map((w) => (
                  <tr>
                    <td>
                      {w.host} · {w.pid}
                      <div class="muted small">since {w.startedAt.replace("T", " ").slice(0, 19)} UTC</div>
                    </td>
                    <td>{w.roles.join(", ")}</td>
                    <td class="small">{w.models.join(", ")}</td>
                    <td>{w.adapters}</td>
                    <td>{w.requests}</td>
                    <td>{w.heartbeatAgeMs === null ? "—" : `${(w.heartbeatAgeMs / 1000).toFixed(1)} s ago`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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
          <div class="table-scroll">
            <table>
              <caption>Stuck for more than {Math.round(deployments.stuckAfterMs / 1000)} s</caption>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">State</th>
                  <th scope="col">For</th>
                </tr>
              </thead>
              <tbody>
                {deployments.stuck.map((d) => (
                  <tr>
                    <td>
                      <a href={`/${d.name}`}>{d.name}</a>
                    </td>
                    <td>{d.state}</td>
                    <td>{Math.round(d.sinceMs / 1000)} s</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="queues-title">
        <h2 id="queues-title">Queues</h2>
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Queue</th>
                <th scope="col">Waiting</th>
                <th scope="col">Oldest waiting</th>
                <th scope="col">Running</th>
                <th scope="col">Delayed</th>
                <th scope="col">Failed</th>
              </tr>
            </thead>
            <tbody>
              {queues.map((q) => (
                <tr>
                  <td>
                    <code>{q.name}</code>
                  </td>
                  <td>{q.waiting}</td>
                  <td>{q.oldestWaitingMs === null ? "—" : `${(q.oldestWaitingMs / 1000).toFixed(1)} s`}</td>
                  <td>{q.active}</td>
                  <td>{q.delayed}</td>
                  <td>{q.failed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </Layout>
  );
}
