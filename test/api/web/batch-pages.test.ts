import fs from "node:fs/promises";
import path from "node:path";
import OpenAI, { toFile } from "openai";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../../src/auth/api-keys.js";
import { launchChromium, SCREENSHOT_DIR } from "../../helpers/browser.js";
import { eventually } from "../../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount, type Management } from "../../helpers/management.js";

const TINY = "accounts/hearth/models/hearth-tiny";

/** A batch input file's text: one chat request per prompt, custom_id `q<i>`. */
function chatLines(prompts: string[], maxTokens = 8): string {
  return prompts
    .map((content, i) =>
      JSON.stringify({
        custom_id: `q${i}`,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: TINY, messages: [{ role: "user", content }], max_tokens: maxTokens, temperature: 0 },
      }),
    )
    .join("\n");
}

// The batches' pages in a real browser (Debian's Chromium) against a real Hearth with a worker
// (hearth-tiny): batches made through the API (the openai SDK) followed on /batches as they run,
// their files downloaded from the page, one cancelled from it; other accounts' ids 404; the
// operators' console (docs/web.md, docs/operations.md).
describe("the batches' pages in Chromium", () => {
  let hearth: TestHearth;
  let browser: Browser;
  let batcher: Management;
  let neighbour: Management;
  let client: OpenAI;
  /** The batch the first test ran to completion, for the later ones. */
  let done: OpenAI.Batch;

  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_BATCH_CONCURRENCY: "1" } });
    batcher = await createTestAccount(hearth, "batcher");
    neighbour = await createTestAccount(hearth, "batch-neighbour");
    client = sdk(batcher.apiKey);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await hearth?.close();
  });

  const sdk = (apiKey: string) => new OpenAI({ baseURL: hearth.baseURL, apiKey, maxRetries: 0 });

  async function createBatch(as: OpenAI, text: string, metadata?: Record<string, string>) {
    const file = await as.files.create({ file: await toFile(Buffer.from(text), "input.jsonl"), purpose: "batch" });
    return as.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata,
    });
  }

  async function signedIn(key: string, viewport?: { width: number; height: number }) {
    const context = await browser.newContext(viewport ? { viewport } : {});
    const page = await context.newPage();
    await page.goto(`${hearth.url}/`);
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/models$/);
    return { context, page };
  }

  /** Waits until the page shows the batch in `status` (static/batches.js reloads it as the batch moves). */
  const shown = (page: Page, id: string, status: string, timeout = 60_000) =>
    page.locator(`[data-batch="${id}"][data-status="${status}"]`).waitFor({ timeout });

  /** The counts the page shows of a batch, by their `<data>` values. */
  async function counts(scope: Locator) {
    const of = async (name: string) => Number(await scope.locator(`data.${name}`).getAttribute("value"));
    return { total: await of("total"), completed: await of("completed"), failed: await of("failed") };
  }

  /** The batches a table shows, in its order. */
  async function batchIds(scope: Locator) {
    const ids: string[] = [];
    for (const status of await scope.locator("tbody [data-status]").all())
      ids.push((await status.getAttribute("data-batch"))!);
    return ids;
  }

  it("follows a batch on /batches until it completes, with the API's counts, and downloads its output", async () => {
    const created = await createBatch(client, chatLines(["The hearth", "A warm fire", "Snow falls"]), {
      purpose: "page-test",
    });
    const { context, page } = await signedIn(batcher.apiKey);
    await page.getByRole("link", { name: "Batches", exact: true }).click();
    expect(new URL(page.url()).pathname).toBe("/batches");

    await shown(page, created.id, "completed");
    done = await client.batches.retrieve(created.id);
    expect(done.status).toBe("completed");
    const row = page.locator("tr", { has: page.locator(`[data-batch="${created.id}"]`) });
    expect(await counts(row)).toEqual(done.request_counts);
    expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    const bar = row.getByRole("progressbar", { name: `Lines of ${created.id} done` });
    expect([await bar.getAttribute("value"), await bar.getAttribute("max")]).toEqual(["3", "3"]);
    expect(await row.locator("td").nth(2).textContent()).toBe("/v1/chat/completions");
    // Ended: no Cancel; no error file, so no link to one.
    expect(await row.getByRole("button", { name: `Cancel ${created.id}` }).count()).toBe(0);
    expect(await row.getByRole("link", { name: `Errors of ${created.id}` }).count()).toBe(0);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "batches.png"), fullPage: true });

    // The output file, downloaded from the page: the API's content, byte for byte.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      row.getByRole("link", { name: `Output of ${created.id}` }).click(),
    ]);
    const downloaded = await fs.readFile((await download.path())!, "utf8");
    expect(downloaded).toBe(await (await client.files.content(done.output_file_id!)).text());
    expect(downloaded.trim().split("\n")).toHaveLength(3);
    // A download, never a page of its own: not stored, and never read as another type.
    const res = await page.request.get(`${hearth.url}/files/${done.output_file_id}/content`);
    expect(res.headers()).toMatchObject({
      "content-type": "application/octet-stream",
      "content-disposition": expect.stringMatching(/^attachment; filename="/),
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
    });

    // Its own page: times, counts and metadata.
    await row.getByRole("link", { name: created.id, exact: true }).click();
    expect(new URL(page.url()).pathname).toBe(`/batches/${created.id}`);
    const facts = page.locator("dl.facts");
    for (const name of ["Created", "In progress", "Finalizing", "Completed"])
      expect(await facts.locator("dt").allTextContents()).toContain(name);
    const completedAt = await facts
      .locator("dt", { hasText: /^Completed$/ })
      .locator("xpath=following-sibling::dd[1]//time")
      .getAttribute("datetime");
    expect(Math.floor(Date.parse(completedAt!) / 1000)).toBe(done.completed_at);
    expect(await counts(facts)).toEqual(done.request_counts);
    const metadata = page.locator("section", { has: page.getByRole("heading", { name: "Metadata" }) });
    expect(await metadata.locator("tbody td").allTextContents()).toEqual(["purpose", "page-test"]);
    await context.close();

    // On a phone: nothing wider than the screen.
    const phone = await signedIn(batcher.apiKey, { width: 390, height: 844 });
    await phone.page.goto(`${hearth.url}/batches`);
    expect(await phone.page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await phone.page.screenshot({ path: path.join(SCREENSHOT_DIR, "phone-batches.png"), fullPage: true });
    await phone.context.close();
  }, 120_000);

  it("shows a batch that failed validation with its lines' errors", async () => {
    const good = chatLines(["one", "two"]);
    const bad = '{"custom_id": "bad", "method": "POST", "url": "/v1/chat/completions", "body": {"model": 3}}';
    const created = await createBatch(client, `${good}\n${bad}`);
    const { context, page } = await signedIn(batcher.apiKey);
    await page.goto(`${hearth.url}/batches/${created.id}`);
    await shown(page, created.id, "failed", 30_000);
    const errors = page.locator("section", { has: page.getByRole("heading", { name: "Why it failed" }) });
    const cells = await errors.locator("tbody td").allTextContents();
    expect(cells.slice(0, 3)).toEqual(["3", "invalid_request", "body.model"]);
    const api = await client.batches.retrieve(created.id);
    expect(cells[3]).toBe(api.errors!.data![0]!.message);
    expect(await counts(page.locator("dl.facts"))).toEqual({ total: 0, completed: 0, failed: 0 });
    await context.close();
  }, 60_000);

  it("cancels a long batch from its page, which follows it without reloading until it ends cancelled", async () => {
    const prompts = Array.from({ length: 80 }, (_, i) => `Line ${i} of a long batch`);
    const created = await createBatch(client, chatLines(prompts, 300));
    const { context, page } = await signedIn(batcher.apiKey);
    await page.goto(`${hearth.url}/batches/${created.id}`);
    await shown(page, created.id, "in_progress", 30_000);

    // Lines complete while the page stays the same page: the script moves the counts in place.
    await page.evaluate("window.samePage = true");
    const facts = page.locator("dl.facts");
    await expect.poll(async () => (await counts(facts)).completed, { timeout: 60_000 }).toBeGreaterThan(0);
    expect(await page.evaluate("window.samePage")).toBe(true);
    const bar = facts.getByRole("progressbar");
    expect(Number(await bar.getAttribute("max"))).toBe(80);

    // The operators' console names the API process that runs it.
    const admin = await signedIn(hearth.apiKey);
    await admin.page.goto(`${hearth.url}/admin`);
    const running = admin.page.locator("tr", { has: admin.page.locator(`[data-batch="${created.id}"]`) });
    await expect(running.locator("td").last().textContent()).resolves.toMatch(/^api-/);
    await admin.context.close();

    await page.getByRole("button", { name: `Cancel ${created.id}` }).click();
    expect(new URL(page.url()).pathname).toBe(`/batches/${created.id}`);
    await shown(page, created.id, "cancelled", 60_000);
    const api = await client.batches.retrieve(created.id);
    expect(api.status).toBe("cancelled");
    expect(await counts(facts)).toEqual(api.request_counts);
    console.log(`${api.request_counts!.completed} of 80 lines had run when the batch was cancelled`);
    expect(api.request_counts!.completed).toBeLessThan(80);
    expect(await page.getByRole("button", { name: `Cancel ${created.id}` }).count()).toBe(0);
    // The lines that never ran are in its error file, linked from the page.
    expect(await page.getByRole("link", { name: `Errors of ${created.id}` }).getAttribute("href")).toBe(
      `/files/${api.error_file_id}/content`,
    );
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "batch-cancelled.png"), fullPage: true });
    await context.close();
  }, 120_000);

  it("answers another account's batch and file ids with 404 pages, and refuses a key without inference", async () => {
    const { context, page } = await signedIn(neighbour.apiKey);
    for (const url of [
      `/batches/${done.id}`,
      `/files/${done.output_file_id}/content`,
      `/files/${done.input_file_id}/content`,
    ]) {
      const res = await page.goto(`${hearth.url}${url}`);
      expect(res?.status()).toBe(404);
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Not found");
    }
    const csrf = (await page.locator('meta[name="hearth-csrf"]').getAttribute("content"))!;
    const cancel = await page.request.post(`${hearth.url}/batches/${done.id}/cancel`, {
      form: { csrf },
      headers: { origin: hearth.url },
      maxRedirects: 0,
    });
    expect(cancel.status()).toBe(404);
    await page.goto(`${hearth.url}/batches`);
    await expect(page.locator("main").textContent()).resolves.toContain("No batches.");
    await context.close();

    // A key without the inference scope: no link to the page, and a 403 page saying why.
    const modelsOnly = await issueApiKey(hearth.api.database.db, {
      accountId: "batcher",
      name: "models-only",
      scopes: ["models"],
    });
    const other = await signedIn(modelsOnly.key);
    expect(await other.page.getByRole("link", { name: "Batches", exact: true }).count()).toBe(0);
    const refused = await other.page.goto(`${hearth.url}/batches`);
    expect(refused?.status()).toBe(403);
    await expect(other.page.locator("main").textContent()).resolves.toContain(
      "This needs a key with the inference scope",
    );
    await other.context.close();

    // Signed out: off to sign in, and back after.
    const anonymous = await browser.newContext();
    const visitor = await anonymous.newPage();
    await visitor.goto(`${hearth.url}/batches/${done.id}`);
    expect(new URL(visitor.url()).searchParams.get("next")).toBe(`/batches/${done.id}`);
    await anonymous.close();
  }, 60_000);

  it("lists every account's batches on the operators' console, and one account's on its page; a member gets 403", async () => {
    const theirs = await createBatch(sdk(neighbour.apiKey), chatLines(["Their line"]));
    await eventually(
      async () => expect((await sdk(neighbour.apiKey).batches.retrieve(theirs.id)).status).toBe("completed"),
      60_000,
    );

    const { context, page } = await signedIn(hearth.apiKey);
    await page.goto(`${hearth.url}/admin`);
    const section = page.locator("section", { has: page.getByRole("heading", { name: "Batches" }) });
    const rowOf = (id: string) => section.locator("tr", { has: page.locator(`[data-batch="${id}"]`) });
    expect(await rowOf(done.id).locator("td").nth(0).textContent()).toBe("batcher");
    expect(await rowOf(theirs.id).locator("td").nth(0).textContent()).toBe("batch-neighbour");
    expect(await counts(rowOf(theirs.id))).toEqual({ total: 1, completed: 1, failed: 0 });
    const api = [...(await sdk(neighbour.apiKey).batches.list()).data, ...(await client.batches.list()).data];
    expect(new Set(await batchIds(section))).toEqual(new Set(api.map((b) => b.id)));
    // Every batch has ended: none waits for a runner.
    await expect(section.getByRole("status").textContent()).resolves.toMatch(/^0 open batches nobody runs/);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "admin-batches.png"), fullPage: true });

    await rowOf(theirs.id).getByRole("link", { name: "batch-neighbour" }).click();
    expect(new URL(page.url()).pathname).toBe("/admin/accounts/batch-neighbour");
    const own = page.locator("section", { has: page.getByRole("heading", { name: "Batches" }) });
    expect(await batchIds(own)).toEqual([theirs.id]);
    await context.close();

    const member = await signedIn(batcher.apiKey);
    expect((await member.page.goto(`${hearth.url}/admin`))?.status()).toBe(403);
    await member.context.close();
  }, 120_000);
});
