import type { Context, Hono } from "hono";
import type { Session } from "../../auth/sessions.js";
import type { Caller } from "../../domain/caller.js";
import { AppError } from "../../errors.js";
import type { AppDeps, AppEnv } from "../app-env.js";
import { issueKeyBody, type IssueApiKeyRequest } from "../contract/management/api-key-resources.js";
import { AccountPage, type Shown } from "./account-page.js";
import { KEY_EXPIRIES, KeyCreatedPage, RevokeKeyPage } from "./key-views.js";
import type { PageKit, PageStatus } from "./page-kit.js";
import { dailyPeriod, periodDays } from "./usage-section.js";

/**
 * `/account`: the signed-in account's usage and API keys. The figures and the rules are the
 * API's own services' (UsageReports, AccountKeys), so that page and API agree; each form
 * carries the session's CSRF token (docs/web.md).
 */
export function accountPageRoutes(app: Hono<AppEnv>, { management }: AppDeps, kit: PageKit) {
  const { page, html, formGuard } = kit;

  const accountPage = async (
    c: Context<AppEnv>,
    session: Session,
    caller: Caller,
    note: { revoked?: string; createError?: string } = {},
    status: PageStatus = 200,
  ) => {
    const now = Date.now();
    const days = periodDays(c.req.query("days"));
    const period = { ...dailyPeriod(days, now), groupBy: "day_model" as const };
    const [usage, keys] = await Promise.all([
      shown(() => management.usage.report(caller, caller.accountId, period)),
      shown(() => management.keys.listOwn(caller, caller.accountId)),
    ]);
    // Only a key of this account that is revoked is said to be (the query string alone says nothing).
    const revoked =
      "value" in keys && keys.value.some((k) => k.prefix === note.revoked && k.revokeTime !== null)
        ? note.revoked
        : undefined;
    const page = (
      <AccountPage
        session={session}
        days={days}
        usage={usage}
        keys={keys}
        now={now}
        revoked={revoked}
        createError={note.createError}
      />
    );
    return html(c, page, status);
  };

  app.get(
    "/account",
    page((c, session, caller) => accountPage(c, session, caller, { revoked: c.req.query("revoked") })),
  );

  app.post(
    "/account/keys",
    ...formGuard,
    page(async (c, session, caller) => {
      const form = await c.req.parseBody({ all: true });
      if (!kit.sameForm(form, session)) return kit.foreignForm(c, session);
      const request = keyRequest(form, Date.now());
      if (typeof request === "string") return accountPage(c, session, caller, { createError: request }, 400);
      try {
        const issued = await management.keys.issueOwn(caller, caller.accountId, request);
        return html(c, <KeyCreatedPage session={session} issued={issued} back="/account" />);
      } catch (error) {
        if (!(error instanceof AppError) || !["invalid_request", "forbidden"].includes(error.code)) throw error;
        const status = error.code === "forbidden" ? 403 : 400;
        return accountPage(c, session, caller, { createError: error.message }, status);
      }
    }),
  );

  app.get(
    "/account/keys/:prefix/revoke",
    page(async (c, session, caller) => {
      const prefix = c.req.param("prefix")!;
      const apiKey = await management.keys.getOwn(caller, caller.accountId, prefix);
      const action = `/account/keys/${encodeURIComponent(prefix)}/revoke`;
      return html(c, <RevokeKeyPage session={session} apiKey={apiKey} action={action} back="/account" />);
    }),
  );

  app.post(
    "/account/keys/:prefix/revoke",
    ...formGuard,
    page(async (c, session, caller) => {
      if (!kit.sameForm(await c.req.parseBody(), session)) return kit.foreignForm(c, session);
      const key = await management.keys.revokeOwn(caller, caller.accountId, c.req.param("prefix")!);
      // Revoking the session's own key ends the session: the next page finds its key no longer valid.
      return c.redirect(`/account?revoked=${encodeURIComponent(key.prefix)}`, 303);
    }),
  );
}

/** A section's figures, or the service's refusal of this session's key in its words. */
async function shown<T>(read: () => Promise<T>): Promise<Shown<T>> {
  try {
    return { value: await read() };
  } catch (error) {
    if (error instanceof AppError && error.code === "forbidden") return { refused: error.message };
    throw error;
  }
}

/** The create form as the API's request (checked by the API's own schema), or what is wrong with it. */
function keyRequest(form: Record<string, unknown>, now: number): IssueApiKeyRequest | string {
  const name = typeof form.name === "string" && form.name.trim() !== "" ? form.name.trim() : undefined;
  const scopes = [form.scopes ?? []].flat();
  const days = (KEY_EXPIRIES as readonly number[]).find((d) => String(d) === form.expires);
  if (days === undefined && form.expires !== "never") return "Choose when the key expires.";
  const expireTime = days === undefined ? undefined : new Date(now + days * 86_400_000).toISOString();
  const parsed = issueKeyBody.safeParse({ name, scopes, ...(expireTime ? { expireTime } : {}) });
  if (!parsed.success) {
    const message = parsed.error.issues[0]!.message;
    return `${message[0]!.toUpperCase()}${message.slice(1)}.`;
  }
  return parsed.data;
}
