import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InferenceOutcome } from "../../../src/workers/inference-handler.js";
import type { JobFinished } from "../../../src/workers/streamed-job.js";
import { launchChromium, SCREENSHOT_DIR } from "../../helpers/browser.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount, defaultAccount } from "../../helpers/management.js";
import { testModelDir } from "../../helpers/test-models.js";

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");

// The pages in a real browser (Debian's Chromium, headless, driven by playwright-core):
// signing in, a deployed adapter's page, a streamed generation, Stop, signing out, access.
describe("the web pages in Chromium", () => {
  let hearth: TestHearth;
  let browser: Browser;
  let adapter: string;
  const finished: JobFinished<InferenceOutcome>[] = [];

  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_CONTEXT_SIZE: "2048" } });
    hearth.worker!.events.on("job-finished", (e: JobFinished<InferenceOutcome>) => finished.push(e));
    adapter = await defaultAccount(hearth).deployFolder("web-lora", PEFT_EXAMPLE);
    const other = await createTestAccount(hearth, "neighbour");
    await other.createModel("their-model");
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await hearth?.close();
  });

  async function signIn(page: Page, key: string) {
    await page.goto(`${hearth.url}/`);
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  /** The API's own greedy answer to the same request, for comparison. */
  async function apiText(prompt: string, maxTokens: number): Promise<string> {
    const res = await fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: adapter, prompt, max_tokens: maxTokens, temperature: 0 }),
    });
    return ((await res.json()) as { choices: { text: string }[] }).choices[0]!.text;
  }

  it("signs in (after a wrong key), streams a generation, stops one, and signs out", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, "hth_wrong_key_0000000000000000000000000000");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("That API key is not valid");
    await signIn(page, hearth.apiKey);
    expect(new URL(page.url()).pathname).toBe("/models");
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "models.png"), fullPage: true });

    await page.getByRole("link", { name: "web-lora" }).click();
    expect(new URL(page.url()).pathname).toBe(`/${adapter}`);
    await expect(page.locator(".facts").textContent()).resolves.toContain("DEPLOYED");

    // Generate: the output grows in several steps, and ends as the API's greedy text.
    await page.getByLabel("Prompt").fill("The hearth ");
    await page.getByLabel("Max tokens").first().fill("300");
    // (Browser-side code as strings: this file is type-checked without the DOM's types.)
    await page.evaluate(`(() => {
      window.updates = 0;
      new MutationObserver(() => window.updates++)
        .observe(document.querySelector("#output"), { childList: true, characterData: true, subtree: true });
    })()`);
    await page.getByRole("button", { name: "Generate" }).first().click();
    expect(await page.evaluate("document.activeElement.id")).toBe("output");
    await page.waitForSelector('form.generate-form[data-state="done"]');
    const text = await page.locator("#output").textContent();
    expect(text).toBe(await apiText("The hearth ", 300));
    const updates = (await page.evaluate("window.updates")) as number;
    console.log(`the output was updated ${updates} times as the stream came in`);
    expect(updates).toBeGreaterThan(3);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "model-page.png"), fullPage: true });

    // Stop, mid-stream: the page stops, and so does the worker.
    await page.getByLabel("Max tokens").first().fill("2000");
    const started = new Promise<string>((resolve) =>
      hearth.worker!.events.once("job-started", (e: { requestId: string }) => resolve(e.requestId)),
    );
    await page.getByRole("button", { name: "Generate" }).first().click();
    await page.locator("#output").filter({ hasText: /./ }).waitFor();
    await page.getByRole("button", { name: "Stop" }).first().click();
    await page.waitForSelector('form.generate-form[data-state="stopped"]');
    const stoppedText = (await page.locator("#output").textContent()) ?? "";
    expect((await apiText("The hearth ", 2000)).startsWith(stoppedText)).toBe(true);
    const stopped = await started;
    const job = () => finished.find((f) => f.requestId === stopped);
    await expect.poll(() => job()?.outcome?.finishReasons, { timeout: 10_000 }).toEqual(["cancelled"]);
    expect(job()!.outcome!.usage.completionTokens).toBeLessThan(2000);

    // Sign out: the pages send one to sign in again.
    await page.getByRole("button", { name: "Sign out" }).click();
    expect(new URL(page.url()).pathname).toBe("/");
    await page.goto(`${hearth.url}/models`);
    expect(new URL(page.url()).pathname).toBe("/");
    await context.close();
  }, 120_000);

  it("holds a conversation in the chat tab, each reply the API's own", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, hearth.apiKey);
    await page.goto(`${hearth.url}/accounts/hearth/models/hearth-tiny`);
    await page.getByRole("tab", { name: "Chat" }).click();
    expect(await page.getByRole("tab", { name: "Chat" }).getAttribute("aria-selected")).toBe("true");
    const chat = page.locator("form.chat-form");
    const messages: { role: string; content: string }[] = [];
    for (const content of ["Tell me about the fire.", "And the hearth?"]) {
      await chat.getByLabel("Message").fill(content);
      await chat.getByRole("button", { name: "Generate" }).click();
      await page.waitForSelector('form.chat-form[data-state="done"]');
      messages.push({ role: "user", content });
      const res = await fetch(`${hearth.baseURL}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "accounts/hearth/models/hearth-tiny", messages, max_tokens: 64, temperature: 0 }),
      });
      const reply = ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
      messages.push({ role: "assistant", content: reply });
      await chat.evaluate((form) => form.removeAttribute("data-state"));
    }
    const shown = await page.locator(".conversation li").allTextContents();
    expect(shown).toEqual(messages.map((m) => m.content));
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "chat.png"), fullPage: true });
    await context.close();
  }, 60_000);

  it("shows each generated token's most likely alternatives on hover, and answers JSON in JSON mode", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, hearth.apiKey);
    await page.goto(`${hearth.url}/accounts/hearth/models/hearth-tiny`);
    const form = page.locator("form.generate-form");
    await form.getByLabel("Prompt").fill("The hearth ");
    await form.getByLabel("Max tokens").fill("12");
    await form.getByRole("button", { name: "Generate" }).click();
    await page.waitForSelector('form.generate-form[data-state="done"]');
    // One span per token, which together are the text; the API's logprobs say what each should show.
    const tokens = form.locator("output .token");
    expect(await tokens.count()).toBe(12);
    const res = await fetch(`${hearth.baseURL}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "accounts/hearth/models/hearth-tiny",
        prompt: "The hearth ",
        max_tokens: 12,
        temperature: 0,
        logprobs: 5,
      }),
    });
    const api = (await res.json()) as {
      choices: { text: string; logprobs: { tokens: string[]; top_logprobs: Record<string, number>[] } }[];
    };
    expect(await form.locator("output").textContent()).toBe(api.choices[0]!.text);
    await tokens.nth(3).hover();
    const tooltip = page.getByRole("tooltip");
    await tooltip.waitFor();
    const rows = await tooltip.locator("tr").allTextContents();
    const expected = Object.entries(api.choices[0]!.logprobs.top_logprobs[3]!);
    expect(rows).toEqual(
      expected.map(([token, logprob]) => `${JSON.stringify(token)}${(100 * Math.exp(logprob)).toFixed(1)}%`),
    );
    expect(await tooltip.locator("tr.chosen td").first().textContent()).toBe(
      JSON.stringify(api.choices[0]!.logprobs.tokens[3]),
    );
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "alternatives.png"), fullPage: true });
    await page.mouse.move(0, 0);
    await tooltip.waitFor({ state: "hidden" });

    // JSON mode: the same model answers a JSON object.
    await form.evaluate((f) => f.removeAttribute("data-state"));
    await form.getByLabel("JSON").check();
    await form.getByLabel("Max tokens").fill("200");
    await form.getByRole("button", { name: "Generate" }).click();
    await page.waitForSelector('form.generate-form[data-state="done"]');
    const json = JSON.parse((await form.locator("output").textContent()) ?? "");
    expect(typeof json === "object" && json !== null && !Array.isArray(json)).toBe(true);
    await context.close();
  }, 60_000);

  it("draws an image for an image model, with a progress bar", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, hearth.apiKey);
    await page.goto(`${hearth.url}/accounts/hearth/models/hearth-sketch`);
    await page.getByLabel("Prompt").fill("a red circle above a blue square");
    await page.getByRole("button", { name: "Generate" }).click();
    await page.waitForSelector('form.image-form[data-state="done"]');
    const image = page.locator(".image-output img");
    expect(await image.getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    expect(await page.locator("progress").getAttribute("max")).not.toBe("1");
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "image.png"), fullPage: true });
    await context.close();
  }, 60_000);

  it("shows an error inline: a model that is not deployed", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, hearth.apiKey);
    await defaultAccount(hearth).createModel("not-deployed", { baseModel: "accounts/hearth/models/hearth-tiny" });
    await page.goto(`${hearth.url}/accounts/default/models/not-deployed`);
    await expect(page.locator(".notice").textContent()).resolves.toContain("not deployed");
    await page.getByLabel("Prompt").fill("Hello ");
    await page.getByRole("button", { name: "Generate" }).first().click();
    await page.waitForSelector('form.generate-form[data-state="failed"]');
    await expect(page.locator(".playground > .error").textContent()).resolves.toMatch(/not deployed/);
    await context.close();
  }, 60_000);

  it("answers another account's model page with 404, as a missing one", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, hearth.apiKey);
    const theirs = await page.goto(`${hearth.url}/accounts/neighbour/models/their-model`);
    expect(theirs?.status()).toBe(404);
    const missing = await page.goto(`${hearth.url}/accounts/neighbour/models/nothing-here`);
    expect(missing?.status()).toBe(404);
    await context.close();
  }, 60_000);

  it("shows operators the workers, deployments and queues, and every queue on /admin/queues; refuses a member", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Whatever the pages' policies block (the board's own included) shows here.
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/content security policy/i.test(m.text())) violations.push(m.text());
    });
    await page.addInitScript(
      `document.addEventListener("securitypolicyviolation", (e) =>
        console.error("Content Security Policy violation: " + e.violatedDirective + " " + e.blockedURI));`,
    );
    // Nothing from elsewhere (the policy would block it, but offline it would not even be asked).
    const requested: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    await signIn(page, hearth.apiKey);
    await page.getByRole("link", { name: "Operations" }).click();
    expect(new URL(page.url()).pathname).toBe("/admin");
    const workers = page.locator("section", { has: page.getByRole("heading", { name: /^Workers/ }) });
    await expect(workers.getByRole("heading").textContent()).resolves.toBe("Workers (1)");
    await expect(workers.locator("tbody").textContent()).resolves.toContain("text, image");
    await expect(page.locator("main").textContent()).resolves.toContain("DEPLOYED: 1");
    for (const queue of ["inference-{hearth-tiny}", "images-{hearth-sketch}", "{model-lifecycle}"]) {
      await page.locator("code", { hasText: queue }).first().waitFor();
    }
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "admin.png"), fullPage: true });
    const board = await page.goto(`${hearth.url}/admin/queues`);
    expect(board?.status()).toBe(200);
    // The board's page as bull-board writes it links Google's fonts: Hearth's copy does not.
    const boardPage = await board!.text();
    expect(boardPage).toContain("static/css/main");
    expect(boardPage).not.toMatch(/fonts\.(googleapis|gstatic)\.com/);
    for (const queue of ["inference-{hearth-tiny}", "images-{hearth-sketch}", "{model-lifecycle}"]) {
      await page.getByText(queue, { exact: true }).first().waitFor();
    }
    // A queue's own page too: its jobs list loads the board's other scripts and styles.
    await page.getByText("{model-lifecycle}", { exact: true }).first().click();
    await page.waitForURL(/\/admin\/queues\/queue\//);
    await page.waitForLoadState("networkidle");
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "admin-queues.png"), fullPage: true });
    expect(violations).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(hearth.url) && !url.startsWith("data:"))).toEqual([]);
    await context.close();

    const member = await createTestAccount(hearth, "just-a-member");
    const memberContext = await browser.newContext();
    const memberPage = await memberContext.newPage();
    await signIn(memberPage, member.apiKey);
    const refused = await memberPage.goto(`${hearth.url}/admin/queues`);
    expect(refused?.status()).toBe(403);
    expect((await memberPage.goto(`${hearth.url}/admin`))?.status()).toBe(403);
    await expect(memberPage.locator("main").textContent()).resolves.toContain(
      "sign in with a key that has the admin scope",
    );
    await memberContext.close();
  }, 60_000);

  it("aligns the header's links and its Sign out button, and has an icon", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, hearth.apiKey);
    // Measured once the signed-in page has its stylesheet: a layout forced before that is unstyled.
    await page.locator("header nav").waitFor();
    await page.waitForLoadState("load");
    expect(await page.evaluate("document.compatMode")).toBe("CSS1Compat"); // standards mode
    const middle = async (name: string, role: "link" | "button") => {
      const box = (await page.locator("header").getByRole(role, { name }).boundingBox())!;
      return box.y + box.height / 2;
    };
    const models = await middle("Models", "link");
    expect(Math.abs((await middle("Operations", "link")) - models)).toBeLessThanOrEqual(2);
    expect(Math.abs((await middle("Sign out", "button")) - models)).toBeLessThanOrEqual(2);

    // The icon the pages link, and the one a browser asks for unprompted.
    const linked = await page.locator('link[rel="icon"]').getAttribute("href");
    for (const icon of [linked!, "/favicon.ico"]) {
      const res = await page.request.get(new URL(icon, hearth.url).href);
      expect(res.status(), icon).toBe(200);
      expect(res.headers()["content-type"], icon).toMatch(/^image\//);
      expect((await res.body()).toString()).toContain("<svg");
    }
    await context.close();
  }, 60_000);

  it("reads well on a phone-sized screen", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await page.goto(`${hearth.url}/`);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "phone-sign-in.png") });
    await signIn(page, hearth.apiKey);
    await page.goto(`${hearth.url}/${adapter}`);
    // Nothing wider than the screen: no sideways scrolling.
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "phone-model-page.png"), fullPage: true });

    // The models' tables: every cell on the screen (none clipped, none beyond a scroll), each badge whole.
    await page.goto(`${hearth.url}/models`);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    const layout = (await page.evaluate(`(() => {
      const width = document.documentElement.clientWidth;
      const outside = [...document.querySelectorAll("table *")].filter((e) => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && (r.left < -0.5 || r.right > width + 0.5);
      });
      const clipped = (e) => {
        const r = e.getBoundingClientRect();
        for (let a = e.parentElement; a; a = a.parentElement) {
          if (getComputedStyle(a).overflowX === "visible") continue;
          const box = a.getBoundingClientRect();
          if (r.left < box.left - 0.5 || r.right > box.right + 0.5) return true;
        }
        return false;
      };
      const badges = [...document.querySelectorAll("table .badge")];
      return {
        outside: outside.map((e) => e.outerHTML.slice(0, 80)),
        badges: badges.length,
        cut: badges.filter((b) => clipped(b) || b.getClientRects().length !== 1).map((b) => b.outerHTML),
      };
    })()`)) as { outside: string[]; badges: number; cut: string[] };
    expect(layout.outside).toEqual([]);
    expect(layout.badges).toBeGreaterThan(2);
    expect(layout.cut).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "phone-models.png"), fullPage: true });
    await context.close();
  }, 60_000);
});
