import type { Session } from "../../auth/sessions.js";
import type { BatchRow } from "../../db/schema/batches.js";
import type { ApiKeyResource } from "../contract/management/api-key-resources.js";
import type { UsageSummary } from "../services/usage-reports.js";
import { BatchTable } from "./batch-views.js";
import { KeyTable } from "./key-views.js";
import { Layout } from "./layout.js";
import { UsageSection } from "./usage-section.js";

/** `/admin/accounts/<account>`: an account's usage, API keys and newest batches, for its operators. */
export function AdminAccountPage(props: {
  session: Session;
  usage: UsageSummary;
  keys: ApiKeyResource[];
  batches: BatchRow[];
  days: number;
  now: number;
}) {
  const { session, usage, keys } = props;
  const path = `/admin/accounts/${encodeURIComponent(usage.accountId)}`;
  return (
    <Layout title={`Account ${usage.accountId}`} session={session}>
      <p class="crumbs">
        <a href="/admin">Operations</a> / accounts / {usage.accountId}
      </p>
      <h1>Account {usage.accountId}</h1>
      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Usage</h2>
        <UsageSection report={usage} days={props.days} path={path} />
      </section>
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">API keys</h2>
        <KeyTable keys={keys} session={session} revokeBase={`${path}/keys`} now={props.now} />
      </section>
      <section aria-labelledby="batches-title">
        <h2 id="batches-title">Batches</h2>
        <BatchTable batches={props.batches} operators withAccount={false} now={props.now} caption="The newest" />
      </section>
    </Layout>
  );
}
