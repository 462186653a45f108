import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { eventually } from "../helpers/eventually.js";
import { freePort } from "../helpers/net.js";
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

  /** How many times `text` holds `part`. */
  const count = (text: string, part: string) => text.split(part).length - 1;

  it("tells what it builds, then once, after /readyz is 200, where to open it and where the key is", async () => {
    const keyFile = path.join(dataDir, "admin-api-key");
    const line = `Hearth is ready: http://127.0.0.1:${port} — sign in with the key in ${keyFile} (npx hearth signin --server http://127.0.0.1:${port} < ${keyFile})`;
    await eventually(async () => expect(output()).toContain(line));
    // Not before: the output as it was while /readyz still said 503 (or nothing) has no such line.
    expect(hearth.outputBeforeReady).not.toContain("Hearth is ready");
    expect(count(output(), "Hearth is ready")).toBe(1);
    const at = output().indexOf(line);
    expect(output().indexOf("API listening")).toBeLessThan(at);
    expect(output().indexOf('"serving model"')).toBeLessThan(at);
    for (const step of [
      "1/3 hearth-tiny.gguf",
      "2/3 examples/hearth-tiny-lora,",
      "3/3 examples/hearth-tiny-lora-gguf",
    ]) {
      expect(output()).toContain(`building the demo models: ${step}`);
    }
    expect(output()).toMatch(/built the demo models in \d+\.\d s \(3 written\)/);
  });

  it("logs one line per request at the default level: method, path, status, model, tokens, time, request ID", async () => {
    const apiKey = await hearth.adminKey();
    const complete = (stream: boolean) =>
      fetch(`http://127.0.0.1:${port}/v1/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "accounts/hearth/models/hearth-tiny",
          prompt: "The fire ",
          max_tokens: 5,
          temperature: 0,
          stream,
          ...(stream ? { stream_options: { include_usage: true } } : {}),
        }),
      });
    for (const stream of [false, true]) {
      const response = await complete(stream);
      expect(response.status).toBe(200);
      await response.text();
      const requestId = response.headers.get("x-request-id")!;
      // The worker's lines about the job are at debug now: only the API's line names the request.
      const lines = await eventually(async () => {
        const found = output()
          .split("\n")
          .filter((l) => l.includes(requestId));
        expect(found).toHaveLength(1);
        return found;
      });
      await new Promise((r) => setTimeout(r, 500)); // a second line would have come by now
      expect(
        output()
          .split("\n")
          .filter((l) => l.includes(requestId)),
      ).toEqual(lines);
      const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
      expect(entry).toMatchObject({
        level: "info",
        scope: "api",
        method: "POST",
        path: "/v1/completions",
        status: 200,
        model: "accounts/hearth/models/hearth-tiny",
        promptTokens: expect.any(Number),
        completionTokens: 5,
        requestId,
      });
      expect(entry.ms).toEqual(expect.any(Number));
      expect(entry.msg).toMatch(
        /^POST \/v1\/completions 200 [\d.]+ ms accounts\/hearth\/models\/hearth-tiny \d+\+5 tokens$/,
      );
    }
    // The health probes (npm start's own, the tests') are at debug.
    expect(output()).not.toContain('"path":"/readyz"');
  });

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

  it("runs a batch through the official SDK: upload, create, poll, read the output file", async () => {
    const apiKey = (await fs.readFile(path.join(dataDir, "admin-api-key"), "utf8")).trim();
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey, maxRetries: 0 });
    const lines = ["The fire ", "A kettle "].map((prompt, i) =>
      JSON.stringify({
        custom_id: `line-${i}`,
        method: "POST",
        url: "/v1/completions",
        body: { model: "accounts/hearth/models/hearth-tiny", prompt, max_tokens: 12, temperature: 0 },
      }),
    );
    const file = await client.files.create({
      file: await toFile(Buffer.from(lines.join("\n")), "requests.jsonl"),
      purpose: "batch",
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/completions",
      completion_window: "24h",
    });
    const batch = await eventually(async () => {
      const now = await client.batches.retrieve(created.id);
      expect(now.status).toBe("completed");
      return now;
    }, 60_000);
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const output = (await (await client.files.content(batch.output_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number; body: OpenAI.Completion } });
    expect(output.map((l) => l.custom_id).sort()).toEqual(["line-0", "line-1"]);
    for (const line of output) {
      expect(line.response.status_code).toBe(200);
      expect(line.response.body.choices[0]!.text).toHaveLength(12);
    }
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
    expect(lines.some((l) => (JSON.parse(l) as { msg?: string }).msg?.startsWith("GET / 200 "))).toBe(true);
    expect(lines.filter((l) => l.includes(apiKey))).toEqual([]);
  }, 60_000);

  // The API drains first (it refuses new requests and lets its streams finish), with the
  // worker still there to finish them; then the worker stops; then (had npm start started
  // one) Redis.
  it("stops in order on Ctrl-C: the API, once its stream has finished, then the worker", async () => {
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
    // SIGINT reaches the supervisor, the API and the worker at once, as from a terminal; the
    // services leave it to the supervisor, whose SIGTERM to each is then their only signal.
    hearth.interrupt();
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

  it("says where the key is again on a second start, on the port it was given (0: a free one); its services stop when it is killed", async () => {
    expect(child.exitCode).toBe(0); // the first start stopped in the test above
    expect(count(output(), "Hearth is ready")).toBe(1);
    const again = await startNpmStart({}, { dataDir, port: 0, waitUntilReady: false });
    try {
      const keyFile = path.join(dataDir, "admin-api-key");
      const url = await eventually(async () => {
        const named = /Hearth is ready: (http:\/\/127\.0\.0\.1:(\d+)) /.exec(again.output());
        expect(named).not.toBeNull();
        expect(Number(named![2])).toBeGreaterThan(0);
        return named![1];
      }, 90_000);
      const line = `Hearth is ready: ${url} — sign in with the key in ${keyFile} (npx hearth signin --server ${url} < ${keyFile})`;
      expect(again.output()).toContain(line);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect(count(again.output(), "Hearth is ready")).toBe(1);
      // Nothing to build and no key to create this time; the line is all that says where the key is.
      expect(again.output()).not.toContain("building the demo models");
      expect(again.output()).not.toContain("Created an admin API key");

      // The supervisor killed outright (no SIGTERM to pass on): the API and the worker see their
      // channel to it close, and stop by themselves.
      const services = childPids(again.child.pid!);
      expect(services).toHaveLength(2);
      again.child.kill("SIGKILL");
      await eventually(async () => expect(services.filter(alive)).toEqual([]), 45_000);
      expect(again.output()).toContain('"signal":"supervisor gone"');
    } finally {
      await again.close();
    }
  }, 120_000);

  it("on a port another server holds, even one whose /readyz says 200, says so and stops, with no ready line", async () => {
    const impostor = http.createServer((_request, response) => response.end("ready"));
    const taken = await freePort();
    await new Promise<void>((resolve) => impostor.listen(taken, "127.0.0.1", resolve));
    const hearth = await startNpmStart({}, { dataDir, port: taken, waitUntilReady: false });
    try {
      const code = await new Promise((resolve) => {
        if (hearth.child.exitCode !== null) resolve(hearth.child.exitCode);
        hearth.child.once("exit", resolve);
      });
      expect(code).toBe(1);
      expect(hearth.output()).toContain(
        `Cannot listen on 127.0.0.1:${taken}: another process already listens there. Stop it, or set PORT to a free port.`,
      );
      expect(hearth.output()).not.toContain("Hearth is ready");
      expect(hearth.output()).not.toContain("Unhandled 'error' event");
    } finally {
      await hearth.close();
      impostor.close();
    }
  }, 90_000);
});

/** The processes whose parent is `pid`. */
function childPids(pid: number): number[] {
  const listed = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
  return listed
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(Number);
}

/** Running: not gone, nor a zombie waiting for whoever adopted it to reap it. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
