import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { eventually } from "../helpers/eventually.js";
import { freePort } from "../helpers/net.js";
import { greedyText } from "../helpers/oracle.js";
import { readSse, textOf, type SseEvent } from "../helpers/sse.js";
import { deleteRedisKeys } from "../helpers/redis.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

// `npm start` as a newcomer runs it: the supervisor starts the API and a worker as
// separate processes, builds the demo models and the admin key on first start.
describe("npm start (supervisor, API and worker as child processes)", () => {
  let child: ChildProcess;
  let dataDir: string;
  let port: number;
  let output = "";
  const prefix = `hearth-start-${crypto.randomBytes(4).toString("hex")}`;
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-start-"));
    port = await freePort();
    child = spawn(process.execPath, ["--import", "tsx", path.join(root, "src/main.ts")], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        HEARTH_DATA_DIR: dataDir,
        REDIS_URL: redisUrl,
        HEARTH_REDIS_PREFIX: prefix,
        HEARTH_CONTEXT_SIZE: "2048",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, 90_000, () => output);
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await fs.rm(dataDir, { recursive: true, force: true });
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
  });

  it("writes the admin key once, mode 0600, and serves hearth-tiny with it", async () => {
    const keyFile = path.join(dataDir, "admin-api-key");
    const stat = await fs.stat(keyFile);
    expect(stat.mode & 0o777).toBe(0o600);
    const apiKey = (await fs.readFile(keyFile, "utf8")).trim();
    // Its output is a pipe here, not a terminal: the key is in the file, never in the output.
    expect(output).not.toContain(apiKey);
    expect(output).toContain(
      `Created an admin API key, written to ${keyFile} (not printed: this output is not a terminal).`,
    );
    await fs.access(path.join(dataDir, "models", "hearth-tiny.gguf"));

    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey, maxRetries: 0 });
    const r = await client.completions.create({
      model: "accounts/hearth/models/hearth-tiny",
      prompt: "The fire ",
      max_tokens: 12,
      temperature: 0,
    });
    expect(r.choices[0]!.text).toHaveLength(12);
  });

  it("serves the pages and the console: sign in, generate, operations, metrics (Chromium)", async () => {
    const apiKey = (await fs.readFile(path.join(dataDir, "admin-api-key"), "utf8")).trim();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const base = `http://127.0.0.1:${port}`;
      await page.goto(`${base}/`);
      await page.getByLabel("API key").fill(apiKey);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("link", { name: "hearth-tiny" }).click();
      await page.getByLabel("Prompt").fill("The fire ");
      await page.getByLabel("Max tokens").first().fill("12");
      await page.getByRole("button", { name: "Generate" }).first().click();
      await page.waitForSelector('form.generate-form[data-state="done"]');
      expect(await page.locator("#output").textContent()).toHaveLength(12);
      await page.getByRole("link", { name: "Operations" }).click();
      await expect(page.locator("main").textContent()).resolves.toContain("Workers (1)");
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(await metrics.text()).toContain('hearth_requests_total{kind="completion",outcome="completed"}');
    } finally {
      await browser.close();
    }
    // The processes' logs are JSON lines, and hold no API key (the first start's, printed once, aside).
    const lines = output.split("\n").filter((l) => l.startsWith("{"));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => (JSON.parse(l) as { msg?: string }).msg === "request")).toBe(true);
    expect(lines.filter((l) => l.includes(apiKey))).toEqual([]);
  }, 60_000);

  // The API drains first (it refuses new requests and lets its streams finish), with the
  // worker still there to finish them; then the worker stops; then (had npm start started
  // one) Redis.
  it("stops in order on SIGTERM: the API, once its stream has finished, then the worker", async () => {
    const apiKey = (await fs.readFile(path.join(dataDir, "admin-api-key"), "utf8")).trim();
    const response = await fetch(`http://127.0.0.1:${port}/v1/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "accounts/hearth/models/hearth-tiny",
        prompt: "Drain ",
        max_tokens: 2000,
        temperature: 0,
        stream: true,
      }),
    });
    const events: SseEvent[] = [];
    const reading = readSse(response, { events }).then(() => Date.now());
    await eventually(async () => expect(events.length).toBeGreaterThan(0));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    // Refused: no connection (the listener is closed), or on a kept-alive one a 503 that closes it.
    const refusedAt = await eventually(async () => {
      const status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status,
        () => "no connection",
      );
      expect([503, "no connection"]).toContain(status);
      return Date.now();
    });
    const streamEndedAt = await reading;
    expect(refusedAt).toBeLessThan(streamEndedAt);
    expect(textOf(events)).toBe(greedyText("Drain ", 2000));
    expect(await exited).toBe(0);
    const api = output.indexOf("stopped: api");
    expect(api).toBeGreaterThan(-1);
    expect(output.indexOf("stopped: worker")).toBeGreaterThan(api);
  }, 60_000);
});

async function waitUntilReady(url: string, timeoutMs: number, log: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`Hearth did not become ready:\n${log()}`);
}
