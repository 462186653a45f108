import { describe, expect, it } from "vitest";
import { createLogger, scrub } from "../src/logger.js";

const KEY = "hth_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd";

describe("the logger", () => {
  const capture = (level: "debug" | "info" | "warn" | "error" = "debug") => {
    const lines: string[] = [];
    return { lines, log: createLogger(level, "test", (line) => void lines.push(line)) };
  };

  it("writes one JSON object a line: level, time, scope, message and fields", () => {
    const { lines, log } = capture("info");
    log.debug("not at this level");
    log.child("jobs").info("job started", { requestId: "r-1", n: 2 });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: "info", scope: "test:jobs", msg: "job started", requestId: "r-1", n: 2 });
    expect(Date.parse(line.time as string)).not.toBeNaN();
  });

  it("never writes an API key or a URL's password, in the message or any field", () => {
    const { lines, log } = capture();
    log.warn(`refused ${KEY}`, {
      key: KEY,
      redisUrl: "redis://default:s3cret-pass@redis.internal:6379/0",
      nested: { list: [`Bearer ${KEY}`, "postgres://hearth:pg-pass@db:5432/hearth"] },
      error: new Error(`cannot reach redis://:s3cret-pass@10.0.0.1:6379 with ${KEY}`),
    });
    const text = lines.join("");
    expect(text).not.toContain(KEY);
    expect(text).not.toContain("s3cret-pass");
    expect(text).not.toContain("pg-pass");
    // What stays is enough to tell which key and which server: the key's prefix, the URL's host.
    expect(text).toContain("hth_AbCdEfGh…");
    expect(text).toContain("redis://default:***@redis.internal:6379/0");
    expect(text).toContain("postgres://hearth:***@db:5432/hearth");
  });

  it("leaves what is not secret alone", () => {
    expect(scrub({ url: "http://localhost:8080/v1", word: "hth_", n: 3 })).toEqual({
      url: "http://localhost:8080/v1",
      word: "hth_",
      n: 3,
    });
  });
});
