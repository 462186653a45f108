import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../../src/api/app-env.js";
import type { Caller } from "../../../src/domain/caller.js";
import { intake, intakeBeforeAuth } from "../../../src/api/middleware/intake.js";
import { IntakeGate } from "../../../src/limits/intake-gate.js";
import type { AuthenticatedKey } from "../../../src/auth/api-keys.js";

/**
 * Where a generation request takes its place in the intake gate (middleware/intake.ts): before
 * authentication when its key's check is reused, else right after it. The gate itself is
 * limits/intake-gate.ts; fair-scheduling.test.ts runs both in the API.
 */
describe("the intake middleware", () => {
  /** Keys whose check is cached ("known"), and the one the stand-in authentication also knows from the database. */
  const cached: Record<string, string> = { "key-a": "a", "key-b": "b" };
  const inDatabase: Record<string, string> = { ...cached, "uncached-a": "a" };

  function gatedApp() {
    const gate = new IntakeGate(1);
    const reachedAuth: string[] = [];
    const handled: string[] = [];
    const finish = new Map<string, () => void>();
    const app = new Hono<AppEnv>();
    const known = (presented: string) =>
      cached[presented] ? ({ accountId: cached[presented] } as AuthenticatedKey) : undefined;
    app.use(
      "/gen",
      intakeBeforeAuth(gate, { known }, (_c, next) => next()),
    );
    // Authentication's stand-in: records who reached it, and sets the caller as the real one does.
    app.use("/gen", async (c, next) => {
      reachedAuth.push(c.req.header("x-name")!);
      const key = c.req.header("authorization")!.slice("Bearer ".length);
      c.set("caller", { accountId: inDatabase[key]! } as Caller);
      await next();
    });
    app.use("/gen", intake(gate));
    app.post("/gen", async (c) => {
      const name = c.req.header("x-name")!;
      handled.push(name);
      await new Promise<void>((resolve) => finish.set(name, resolve));
      return c.text("ok");
    });
    const send = (name: string, key: string) =>
      app.request("/gen", { method: "POST", headers: { authorization: `Bearer ${key}`, "x-name": name } });
    return { gate, reachedAuth, handled, finish, send };
  }

  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it("holds an account's requests with a cached key before authentication while its places are taken", async () => {
    const { gate, reachedAuth, handled, finish, send } = gatedApp();
    const a1 = send("a1", "key-a");
    await settle();
    const a2 = send("a2", "key-a");
    const b1 = send("b1", "key-b");
    await settle();
    // a2 waits at the gate before authentication's round trips; another account goes through.
    expect(reachedAuth).toEqual(["a1", "b1"]);
    expect(handled).toEqual(["a1", "b1"]);
    expect(gate.load("a")).toEqual({ active: 1, waiting: 1 });
    finish.get("a1")!();
    expect((await a1).status).toBe(200);
    await settle();
    expect(reachedAuth).toEqual(["a1", "b1", "a2"]);
    finish.get("a2")!();
    finish.get("b1")!();
    expect([(await a2).status, (await b1).status]).toEqual([200, 200]);
    expect(gate.load("a")).toEqual({ active: 0, waiting: 0 });
  });

  it("places a request whose key is not cached once it is authenticated, and only once", async () => {
    const { gate, reachedAuth, handled, finish, send } = gatedApp();
    const a1 = send("a1", "key-a");
    await settle();
    const u1 = send("u1", "uncached-a");
    await settle();
    // Authenticated (the database's answer names account a), then waiting for a's place.
    expect(reachedAuth).toEqual(["a1", "u1"]);
    expect(handled).toEqual(["a1"]);
    expect(gate.load("a")).toEqual({ active: 1, waiting: 1 });
    finish.get("a1")!();
    await a1;
    await settle();
    expect(handled).toEqual(["a1", "u1"]);
    // The request placed before authentication was not placed again after it.
    expect(gate.load("a")).toEqual({ active: 1, waiting: 0 });
    finish.get("u1")!();
    expect((await u1).status).toBe(200);
    expect(gate.load("a")).toEqual({ active: 0, waiting: 0 });
  });
});
