import type { Session } from "../../auth/sessions.js";
import type { ApiKeyResource, IssuedApiKey } from "../contract/management/api-key-resources.js";
import { Layout } from "./layout.js";
import { when } from "./page-time.js";
import { Table } from "./table.js";

/** The expiries the create form offers, in days. */
export const KEY_EXPIRIES = [7, 30, 90, 365] as const;

/**
 * An account's API keys (never the keys): prefix, name, scopes, dates, and a link to revoke
 * each live one (`revokeBase/<prefix>/revoke`, a confirmation page) when `revokeBase` is given.
 */
export function KeyTable(props: { keys: ApiKeyResource[]; session: Session; revokeBase?: string; now: number }) {
  const { keys, session, revokeBase, now } = props;
  if (keys.length === 0) return <p class="muted">No API keys.</p>;
  return (
    <Table
      caption="API keys (only their first characters: Hearth keeps no key, only its hash)"
      headers={["Prefix", "Name", "Scopes", "Created", "Last used", "Expires", "Status", ...(revokeBase ? [""] : [])]}
      rows={keys.map((k) => {
        const status = keyStatus(k, now);
        return [
          <>
            <code class="nowrap">{k.prefix}</code>
            {k.prefix === session.prefix && <div class="muted small">this session's key</div>}
          </>,
          k.name,
          k.scopes.join(", "),
          when(k.createTime),
          when(k.lastUseTime) ?? "—",
          when(k.expireTime) ?? "never",
          <span class={`badge state-${status === "active" ? "ready" : "failed"}`}>{status}</span>,
          ...(revokeBase
            ? [
                status === "revoked" ? (
                  ""
                ) : (
                  <a href={`${revokeBase}/${k.prefix}/revoke`} aria-label={`Revoke ${k.prefix}`}>
                    Revoke…
                  </a>
                ),
              ]
            : []),
        ];
      })}
    />
  );
}

/**
 * The form that makes a key: its name, its scopes (those of the session's key: no key makes a
 * stronger one) and when it expires (never after the session's key).
 */
export function CreateKeyForm(props: { session: Session; keys: ApiKeyResource[]; now: number; error?: string }) {
  const { session, keys, now } = props;
  const limit = keys.find((k) => k.prefix === session.prefix)?.expireTime ?? null;
  const expiries = KEY_EXPIRIES.filter((d) => limit === null || now + d * 86_400_000 <= Date.parse(limit));
  return (
    <form method="post" action="/account/keys" class="stack card" aria-labelledby="create-key-title">
      <h3 id="create-key-title">Create a key</h3>
      <input type="hidden" name="csrf" value={session.csrf} />
      <label for="key-name">Name</label>
      <input id="key-name" name="name" maxlength={256} placeholder="what the key is for, e.g. ci" />
      <fieldset class="row">
        <legend>Scopes</legend>
        {session.scopes.map((scope) => (
          <label class="switch">
            <input type="checkbox" name="scopes" value={scope} checked={scope !== "admin"} />
            {scope}
          </label>
        ))}
      </fieldset>
      <label for="key-expiry">Expires</label>
      <select id="key-expiry" name="expires">
        {expiries.map((d) => (
          <option value={String(d)} selected={d === 90}>
            in {d} days
          </option>
        ))}
        <option value="never" selected={expiries.length === 0}>
          {limit === null ? "never" : `when this session's key does (${limit.slice(0, 10)})`}
        </option>
      </select>
      {props.error && (
        <p class="error" role="alert">
          {props.error}
        </p>
      )}
      <button type="submit">Create key</button>
    </form>
  );
}

/** The new key, shown this once. */
export function KeyCreatedPage(props: { session: Session; issued: IssuedApiKey; back: string }) {
  const { key, apiKey } = props.issued;
  return (
    <Layout title="Key created" session={props.session}>
      <section class="card">
        <h1>Key created</h1>
        <p class="notice">Copy the key now: Hearth keeps only its hash, and this page is the only time it is shown.</p>
        <label for="new-key">API key</label>
        <input id="new-key" readonly value={key} class="wide" />
        <dl class="facts">
          <dt>Prefix</dt>
          <dd>
            <code>{apiKey.prefix}</code>
          </dd>
          <dt>Name</dt>
          <dd>{apiKey.name}</dd>
          <dt>Scopes</dt>
          <dd>{apiKey.scopes.join(", ")}</dd>
          <dt>Expires</dt>
          <dd>{when(apiKey.expireTime) ?? "never"}</dd>
        </dl>
        <p>
          <a href={props.back}>Back to the account</a>
        </p>
      </section>
    </Layout>
  );
}

/** Asks before revoking a key (a form posted with the session's CSRF token). */
export function RevokeKeyPage(props: { session: Session; apiKey: ApiKeyResource; action: string; back: string }) {
  const { session, apiKey } = props;
  const own = apiKey.prefix === session.prefix;
  return (
    <Layout title="Revoke a key" session={session}>
      <section class="card narrow">
        <h1>Revoke {apiKey.prefix}?</h1>
        <p>
          The key “{apiKey.name}” ({apiKey.scopes.join(", ")}) of account {apiKey.accountId} stops working at once here,
          and on every other API process within seconds. This cannot be undone.
        </p>
        {own && <p class="notice">This is the key this session signed in with: revoking it signs you out.</p>}
        <form method="post" action={props.action} class="row">
          <input type="hidden" name="csrf" value={session.csrf} />
          <button type="submit">Revoke key</button>
          <a href={props.back}>Cancel</a>
        </form>
      </section>
    </Layout>
  );
}

function keyStatus(k: ApiKeyResource, now: number): "active" | "revoked" | "expired" {
  if (k.revokeTime !== null) return "revoked";
  if (k.expireTime !== null && Date.parse(k.expireTime) <= now) return "expired";
  return "active";
}
