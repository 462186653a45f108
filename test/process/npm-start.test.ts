import fs from "node:fs/promises";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { eventually } from "../helpers/eventually.js";
import { startNpmStart, type StartedHearth } from "../helpers/npm-start.js";
import { greedyText } from "../helpers/oracle.js";
import { readSse, textOf, type SseEvent } from "../helpers/sse.js";

// `npm start` as a newcomer runs it: the supervisor starts the API and a worker as
// separate processes, builds the demo models and the admin key on first start.
describe("npm start (supervisor, API and worker as child processes)", () => {
  let hearth: StartedHearth;
  let child: StartedHearth["child"];
  let dataDir: string;
  let port: number;
  const output = () => hearth.output();

  beforeAll(async () => {
    hearth = await startNpmStart();
    ({ child, dataDir, port } = hearth);
  }, 120_000);

  afterAll(() => hearth?.close());

  it("writes the admin key once, mode 0600, and serves hearth-tiny with it", async () => {
    const keyFile = path.join(dataDir, "admin-api-key");
    const stat = await fs.stat(keyFile);
    expect(stat.mode & 0o777).toBe(0o600);
    const apiKey = (await fs.readFile(keyFile, "utf8")).trim();
    // Its output is a pipe here, not a terminal: the key is in the file, never in the output.
    expect(output()).not.toContain(apiKey);
    expect(output()).toContain(
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
    const lines = output()
      .split("\n")
      .filter((l) => l.startsWith("{"));
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
    const api = output().indexOf("stopped: api");
    expect(api).toBeGreaterThan(-1);
    expect(output().indexOf("stopped: worker")).toBeGreaterThan(api);
  }, 60_000);
});
