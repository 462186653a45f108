import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { configTable } from "../src/config/table.js";
import { tiers, variables } from "../src/config/variables.js";

describe("config", () => {
  it("has documented defaults", () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.redisUrl).toBe("redis://127.0.0.1:6379");
    expect(c.redisUrlDefaulted).toBe(true);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toBe(path.resolve("./data"));
    expect(c.modelDir).toBe(path.resolve("./data/models"));
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.worker)).toBe(true);
  });
  it("leaves a core free for the rest when the worker's threads are not set", () => {
    expect(loadConfig({}).worker.threads).toBe(Math.max(1, os.availableParallelism() - 1));
    expect(loadConfig({ HEARTH_WORKER_THREADS: "3" }).worker.threads).toBe(3);
    expect(loadConfig({}).worker.adapterSequences).toBe(2);
    expect(loadConfig({}).worker.adapterContexts).toBe(8);
  });
  it("lists every bad variable at once", () => {
    try {
      loadConfig({ PORT: "http", HEARTH_WORKER_CONCURRENCY: "0", REDIS_URL: "not a url" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join("\n");
      expect(problems).toContain("PORT");
      expect(problems).toContain("HEARTH_WORKER_CONCURRENCY");
      expect(problems).toContain("REDIS_URL");
    }
  });
  it("treats empty strings as unset", () => {
    const c = loadConfig({ DATABASE_URL: "", HEARTH_ADMIN_KEY: "" });
    expect(c.databaseUrl).toBeUndefined();
    expect(c.adminKey).toBeUndefined();
  });
  it("chooses the storage backend by URL, local files by default", () => {
    expect(loadConfig({}).storage).toEqual({ scheme: "file", dir: path.resolve("./data/storage") });
    expect(loadConfig({ HEARTH_STORAGE_DIR: "/srv/blobs" }).storage).toEqual({ scheme: "file", dir: "/srv/blobs" });
    const both = loadConfig({ HEARTH_STORAGE_DIR: "/srv/blobs", HEARTH_STORAGE_URL: "file:///mnt/shared/hearth" });
    expect(both.storage).toEqual({ scheme: "file", dir: "/mnt/shared/hearth" });
    for (const bad of ["/not/a/url", "ftp://host/x", "s3://x"]) {
      expect(() => loadConfig({ HEARTH_STORAGE_URL: bad }), bad).toThrow(/HEARTH_STORAGE_URL/);
    }
    expect(() => loadConfig({ HEARTH_STORAGE_URL: "ftp://host/x" })).toThrow(
      /the storage backends are file:\/\/, s3:\/\//,
    );
    expect(loadConfig({ HEARTH_STORAGE_URL: "s3://bucket/prefix" }).storage).toEqual({
      scheme: "s3",
      bucket: "bucket",
      prefix: "prefix",
    });
    expect(loadConfig({ HEARTH_STORAGE_URL: "s3://bucket" }).storage).toEqual({
      scheme: "s3",
      bucket: "bucket",
      prefix: "",
    });
    expect(loadConfig({ HEARTH_STORAGE_URL: "file://localhost/srv/a%20b" }).storage).toEqual({
      scheme: "file",
      dir: "/srv/a b",
    });
    // Another host, or a relative path new URL would quietly make absolute: config errors, not a TypeError later.
    for (const bad of ["file://fileserver/x", "file:./storage", "file:relative"]) {
      expect(() => loadConfig({ HEARTH_STORAGE_URL: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ HEARTH_STORAGE_URL: bad }), bad).toThrow(/file:\/\/\/abs\/path/);
    }
  });
  it("documents every variable: the essentials in the README, every tier in docs/configuration.md", async () => {
    const { readFile } = await import("node:fs/promises");
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const reference = await readFile(new URL("../docs/configuration.md", import.meta.url), "utf8");
    expect(readme).toContain(configTable(tiers[0].variables));
    for (const tier of tiers)
      expect(reference, tier.title).toContain(`## ${tier.title}\n\n${configTable(tier.variables)}`);
  });
  it("reads HEARTH_PRICES' JSON, and names what is wrong with it", () => {
    expect(loadConfig({}).prices).toBeNull();
    expect(loadConfig({ HEARTH_PRICES: " " }).prices).toBeNull();
    const prices = loadConfig({
      HEARTH_PRICES: JSON.stringify({ currency: "USD", models: { "*": { completionPerMillion: 0.6 } } }),
    }).prices;
    expect(prices).toEqual({
      currency: "USD",
      models: {
        "*": { promptPerMillion: 0, cachedPerMillion: 0, completionPerMillion: 0.6, perImage: 0, perDeployedHour: 0 },
      },
    });
    for (const [bad, problem] of [
      ["{currency", /HEARTH_PRICES.*not JSON/],
      [JSON.stringify({ currency: "dollars", models: {} }), /currency must be an ISO 4217 code/],
      [JSON.stringify({ currency: "USD", models: { m: { perImage: -1 } } }), /models\.m\.perImage/],
      [JSON.stringify({ currency: "USD", models: { m: { perToken: 1 } } }), /perToken|Unrecognized/],
    ] as const) {
      expect(() => loadConfig({ HEARTH_PRICES: bad }), bad).toThrow(problem);
    }
  });
  it("reads HEARTH_USAGE_RETENTION_DAYS: 90 days unless set, 0 to keep usage records forever", () => {
    expect(loadConfig({}).usageRetentionDays).toBe(90);
    expect(loadConfig({ HEARTH_USAGE_RETENTION_DAYS: "400" }).usageRetentionDays).toBe(400);
    expect(loadConfig({ HEARTH_USAGE_RETENTION_DAYS: "0" }).usageRetentionDays).toBeNull();
    for (const bad of ["-1", "1.5", "off", "36501"]) {
      expect(() => loadConfig({ HEARTH_USAGE_RETENTION_DAYS: bad }), bad).toThrow(/HEARTH_USAGE_RETENTION_DAYS/);
    }
  });
  it("meters usage unless HEARTH_USAGE_METERING turns it off, and refuses a value it cannot read", () => {
    expect(loadConfig({}).usageMetering).toBe(true);
    expect(loadConfig({ HEARTH_USAGE_METERING: "false" }).usageMetering).toBe(false);
    expect(loadConfig({ HEARTH_USAGE_METERING: "0" }).usageMetering).toBe(false);
    expect(() => loadConfig({ HEARTH_USAGE_METERING: "sometimes" })).toThrow(/HEARTH_USAGE_METERING="sometimes"/);
  });
  it("puts each variable in one tier, with a one-line description", () => {
    const named = tiers.flatMap((t) => Object.keys(t.variables));
    expect(new Set(named).size).toBe(named.length);
    expect(named.length).toBe(Object.keys(variables).length);
    for (const [name, spec] of Object.entries(variables)) {
      expect(spec.description.length, name).toBeLessThanOrEqual(120);
      expect(spec.description, name).not.toContain("\n");
    }
  });
  it("derives the worker's concurrency from its sequences when it is not set", () => {
    // Adapters come from the shared queue and the worker's own, each at this concurrency: half of 8 × 2.
    expect(loadConfig({}).worker.concurrency).toBe(8);
    expect(loadConfig({ HEARTH_SEQUENCES_PER_CONTEXT: "8", HEARTH_CONTEXTS_PER_MODEL: "2" }).worker.concurrency).toBe(
      16,
    );
    expect(loadConfig({ HEARTH_ADAPTER_CONTEXTS: "4", HEARTH_SEQUENCES_PER_CONTEXT: "2" }).worker.concurrency).toBe(4);
    expect(loadConfig({ HEARTH_SEQUENCES_PER_CONTEXT: "1", HEARTH_ADAPTER_SEQUENCES: "5" }).worker.concurrency).toBe(
      20,
    );
    expect(loadConfig({ HEARTH_WORKER_CONCURRENCY: "6" }).worker.concurrency).toBe(6);
    expect(loadConfig({ HEARTH_WORKER_CONCURRENCY: "" }).worker.concurrency).toBe(8);
  });
  it("bounds the prompt cache only when told to, and refuses a bound below 0", () => {
    expect(loadConfig({}).worker.promptCacheTokens).toBeNull();
    expect(loadConfig({ HEARTH_PROMPT_CACHE_TOKENS: "0" }).worker.promptCacheTokens).toBe(0);
    expect(loadConfig({ HEARTH_PROMPT_CACHE_TOKENS: "4096" }).worker.promptCacheTokens).toBe(4096);
    expect(() => loadConfig({ HEARTH_PROMPT_CACHE_TOKENS: "-1" })).toThrow(/HEARTH_PROMPT_CACHE_TOKENS="-1"/);
    expect(() => loadConfig({ HEARTH_PROMPT_CACHE_TOKENS: "lots" })).toThrow(/HEARTH_PROMPT_CACHE_TOKENS/);
  });
  describe("refuses contradictory settings, naming both", () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).problems;
      }
      return expect.unreachable();
    };
    it("a concurrency below the base model's sequences", () => {
      const [problem, ...rest] = refused({ HEARTH_WORKER_CONCURRENCY: "2", HEARTH_SEQUENCES_PER_CONTEXT: "4" });
      expect(rest).toEqual([]);
      expect(problem).toMatch(
        /HEARTH_WORKER_CONCURRENCY=2.*HEARTH_CONTEXTS_PER_MODEL × HEARTH_SEQUENCES_PER_CONTEXT \(1 × 4\)/,
      );
      expect(refused({ HEARTH_WORKER_CONCURRENCY: "4", HEARTH_CONTEXTS_PER_MODEL: "2" })[0]).toContain("(2 × 4)");
      expect(loadConfig({ HEARTH_WORKER_CONCURRENCY: "4", HEARTH_SEQUENCES_PER_CONTEXT: "4" }).worker.concurrency).toBe(
        4,
      );
    });
    it("more adapters kept loaded than a model object loads before it is re-created", () => {
      const problems = refused({ HEARTH_WORKER_MAX_ADAPTERS: "9", HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL: "8" });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/HEARTH_WORKER_MAX_ADAPTERS=9 is above HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL=8/);
      expect(() =>
        loadConfig({ HEARTH_WORKER_MAX_ADAPTERS: "8", HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL: "8" }),
      ).not.toThrow();
    });
    it("an express wait with the express lane off", () => {
      const problems = refused({ HEARTH_EXPRESS_SEQUENCES: "0", HEARTH_EXPRESS_WAIT_MS: "100" });
      expect(problems).toEqual([expect.stringMatching(/HEARTH_EXPRESS_WAIT_MS.*HEARTH_EXPRESS_SEQUENCES=0/)]);
      expect(loadConfig({ HEARTH_EXPRESS_SEQUENCES: "0" }).express.enabled).toBe(false);
      expect(loadConfig({ HEARTH_EXPRESS_SEQUENCES: "0", HEARTH_EXPRESS_WAIT_MS: "" }).express.enabled).toBe(false);
    });
    it("a placement wait with placement off", () => {
      const problems = refused({ HEARTH_PLACEMENT: "false", HEARTH_PLACEMENT_WAIT_MS: "100" });
      expect(problems).toEqual([expect.stringMatching(/HEARTH_PLACEMENT_WAIT_MS.*HEARTH_PLACEMENT=false/)]);
      expect(loadConfig({ HEARTH_PLACEMENT: "false" }).placement.enabled).toBe(false);
    });
    it("every contradiction at once", () => {
      const problems = refused({
        HEARTH_WORKER_CONCURRENCY: "1",
        HEARTH_WORKER_MAX_ADAPTERS: "100",
        HEARTH_PLACEMENT: "false",
        HEARTH_PLACEMENT_WAIT_MS: "1",
      });
      expect(problems).toHaveLength(3);
    });
  });
});
