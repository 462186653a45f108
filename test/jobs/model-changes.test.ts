import crypto from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { ModelChanges, modelChangesChannel } from "../../src/jobs/model-changes.js";

// Two API processes' feeds, on one Redis: a change is applied at once where it is made, and soon in the other.
describe("model changes", () => {
  const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-test-${crypto.randomBytes(4).toString("hex")}`;
  const log = createLogger("error", "test");
  const connections: Redis[] = [];
  const connect = () => {
    const redis = new Redis(url);
    connections.push(redis);
    return redis;
  };
  const seen = { a: [] as string[], b: [] as string[] };
  let a: ModelChanges;
  let b: ModelChanges;

  beforeAll(async () => {
    a = new ModelChanges(connect(), prefix, (m) => seen.a.push(m), log);
    b = new ModelChanges(connect(), prefix, (m) => seen.b.push(m), log);
    await a.listen(connect());
    await b.listen(connect());
  });
  afterAll(() => {
    for (const c of connections) c.disconnect();
  });

  const eventually = async (check: () => void) => {
    for (let i = 0; ; i++) {
      try {
        return check();
      } catch (err) {
        if (i >= 200) throw err;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  };

  it("applies a change here before publishing it, and there once it arrives", async () => {
    const done = a.changed("accounts/acme/models/x");
    expect(seen.a).toEqual(["accounts/acme/models/x"]); // synchronously, before any round trip
    await done;
    await eventually(() => expect(seen.b).toEqual(["accounts/acme/models/x"]));
  });

  it("ignores malformed messages", async () => {
    const raw = connect();
    seen.b.length = 0;
    await raw.publish(modelChangesChannel(prefix), "not json");
    await raw.publish(modelChangesChannel(prefix), JSON.stringify({ nope: 1 }));
    await raw.publish(modelChangesChannel(prefix), JSON.stringify({ model: "accounts/acme/models/y" }));
    await eventually(() => expect(seen.b).toEqual(["accounts/acme/models/y"]));
  });

  it("still applies the change here when Redis refuses the publish", async () => {
    const down = new Redis(url, { lazyConnect: true, enableOfflineQueue: false });
    connections.push(down);
    const applied: string[] = [];
    await new ModelChanges(down, prefix, (m) => applied.push(m), log).changed("accounts/acme/models/z");
    expect(applied).toEqual(["accounts/acme/models/z"]);
  });
});
