import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { answers, startLocalRedis } from "../../src/process/local-redis.js";
import { freePort } from "../helpers/net.js";

describe("the local Redis that npm start falls back to", () => {
  let dataDir: string;
  const lines: string[] = [];
  const log = createLogger("info", "test", (line) => void lines.push(line));

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-redis-"));
  });
  afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));

  it("starts redis-server and waits until it answers", async () => {
    const port = await freePort();
    const child = await startLocalRedis({ dataDir, port, log });
    try {
      expect(child).toBeDefined();
      expect(await answers("127.0.0.1", port)).toBe(true);
      expect(
        execFileSync("redis-cli", ["-p", String(port), "ping"])
          .toString()
          .trim(),
      ).toBe("PONG");
    } finally {
      child?.kill("SIGKILL");
    }
  });

  it("says how to get Redis when the binary is missing", async () => {
    const child = await startLocalRedis({ dataDir, port: await freePort(), log, binary: "/nonexistent/redis-server" });
    expect(child).toBeUndefined();
    expect(lines.join("")).toContain("apt-get install redis-server");
  });
});
