import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import type { Session } from "../../auth/sessions.js";

/**
 * The frame of every page: its head, the header with where one is and who signed in. The
 * doctype keeps browsers in standards mode (without it a form has a bottom margin, for one).
 */
export function Layout(props: { title: string; session?: Session; children: Child }) {
  const { session } = props;
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${props.title} · Hearth`}</title>
          <link rel="stylesheet" href="/static/style.css" />
          <link rel="icon" type="image/svg+xml" href="/static/favicon.svg" />
          {session && <meta name="hearth-csrf" content={session.csrf} />}
        </head>
        <body>
          <header class="top">
            <a class="brand" href={session ? "/models" : "/"}>
              Hearth
            </a>
            {session && (
              <nav aria-label="Main">
                <a href="/models">Models</a>
                {session.scopes.includes("inference") && <a href="/batches">Batches</a>}
                <a href="/account">Account</a>
                {session.scopes.includes("admin") && <a href="/admin">Operations</a>}
                <span class="who">
                  {session.accountId} · {session.prefix}…
                </span>
                <form method="post" action="/signout" class="inline">
                  <input type="hidden" name="csrf" value={session.csrf} />
                  <button type="submit" class="link">
                    Sign out
                  </button>
                </form>
              </nav>
            )}
          </header>
          <main id="main">{props.children}</main>
        </body>
      </html>
    </>
  );
}
