import type { Session } from "../../auth/sessions.js";
import type { ApiKeyResource } from "../contract/management/api-key-resources.js";
import type { UsageSummary } from "../services/usage-reports.js";
import { CreateKeyForm, KeyTable } from "./key-views.js";
import { Layout } from "./layout.js";
import { UsageSection } from "./usage-section.js";

/** What a section shows: its figures, or why the session's key may not see them. */
export type Shown<T> = { value: T } | { refused: string };

/**
 * `/account`: the signed-in account's usage (chart, figures, totals, costs) and its API keys
 * (list, create, revoke). A key without the models scope sees why each is not shown.
 */
export function AccountPage(props: {
  session: Session;
  days: number;
  usage: Shown<UsageSummary>;
  keys: Shown<ApiKeyResource[]>;
  now: number;
  /** The key just revoked (after the redirect), or why the last create failed. */
  revoked?: string;
  createError?: string;
}) {
  const { session, usage, keys, now } = props;
  return (
    <Layout title="Account" session={session}>
      <h1>Account {session.accountId}</h1>
      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Usage</h2>
        {"value" in usage ? (
          <UsageSection report={usage.value} days={props.days} path="/account" />
        ) : (
          <p class="notice">{usage.refused}</p>
        )}
      </section>
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">API keys</h2>
        {props.revoked && (
          <p class="notice" role="status">
            Key <code>{props.revoked}</code> revoked.
          </p>
        )}
        {"value" in keys ? (
          <>
            <KeyTable keys={keys.value} session={session} revokeBase="/account/keys" now={now} />
            <CreateKeyForm session={session} keys={keys.value} now={now} error={props.createError} />
          </>
        ) : (
          <p class="notice">{keys.refused}</p>
        )}
      </section>
    </Layout>
  );
}
