import crypto from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseMonitorLine, RedisMonitor, type MonitoredCommand } from "../../bench/src/redis-monitor.js";

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

describe("RedisMonitor", () => {
  let client: Redis;
  const key = `hearth-test-monitor:${crypto.randomUUID()}`;

  beforeAll(() => {
    client = new Redis(redisUrl);
  });
  afterAll(async () => {
    await client.del(key);
    client.disconnect();
  });

  it("opens and closes on a server busy with another client's commands, and sees them", async () => {
    // ioredis's own monitor() throws "Command queue state error" out of its socket handler here:
    // the first monitored command comes in the same read as MONITOR's +OK.
    let flooding = true;
    const flood = (async () => {
      while (flooding) await Promise.all(Array.from({ length: 50 }, () => client.ping(key)));
    })();
    try {
      for (let i = 0; i < 30; i++) {
        let pings = 0;
        const monitor = await RedisMonitor.open(redisUrl, (c) => {
          if (c.args[0] === "ping" && c.args[1] === key) pings++;
        });
        // Closed while the flood's commands are still coming in.
        await vi.waitFor(() => expect(pings).toBeGreaterThan(0), { timeout: 5000, interval: 1 });
        monitor.close();
      }
    } finally {
      flooding = false;
      await flood;
    }
  });

  it("gives each argument back byte for byte, whatever Redis escaped in its line", async () => {
    const value = 'quote " backslash \\ newline \n cr \r tab \t bell \x07 nul \x00 byte \x01 unicode é→✓';
    const seen: MonitoredCommand[] = [];
    const monitor = await RedisMonitor.open(redisUrl, (c) => seen.push(c));
    const before = Date.now();
    await client.set(key, value);
    await client.get(key);
    monitor.close();
    const set = seen.find((c) => c.args[0] === "set" && c.args[1] === key);
    expect(set?.args).toEqual(["set", key, value]);
    expect(set?.at).toBeGreaterThan(before - 1000);
    expect(set?.source).toMatch(/^[\d.:[\]a-f]+:\d+$/);
  });

  it("reads the source of a script's commands and of a socket client", () => {
    const line = parseMonitorLine('1795654372.520668 [0 lua] "XADD" "k" "1-1" "e" "{\\"a\\":1}"');
    expect(line).toMatchObject({ source: "lua", args: ["XADD", "k", "1-1", "e", '{"a":1}'] });
    expect(line?.at).toBeCloseTo(1795654372520.668, 1);
    expect(parseMonitorLine('1.5 [3 unix:/run/redis.sock] "ping"')?.source).toBe("unix:/run/redis.sock");
    expect(parseMonitorLine("OK")).toBeUndefined();
  });

  it("rejects with Redis's reason when the server refuses the handshake", async () => {
    const url = new URL(redisUrl);
    url.username = "nobody";
    url.password = "wrong";
    await expect(RedisMonitor.open(url.toString(), () => {})).rejects.toThrow(
      /Redis refused MONITOR: .*(WRONGPASS|AUTH)/,
    );
  });
});
