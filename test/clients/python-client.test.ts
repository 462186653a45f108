import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultChatStops, renderDefaultChat } from "../../src/workers/engine/default-chat-template.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { defaultAccount } from "../helpers/management.js";
import { greedyText } from "../helpers/oracle.js";
import { testModelDir } from "../helpers/test-models.js";

const MODEL = "accounts/hearth/models/hearth-tiny";
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLIENT_DIR = path.join(ROOT, "clients", "python");
const MAX_BODY_BYTES = 65_536;
const PYTHON = process.env.HEARTH_TEST_PYTHON ?? "python3";

// The Python client's own unittest suite (clients/python/tests), run against a real Hearth:
// the expected texts come from the demo model's tables, as in the SDK tests.
describe("Python client (clients/python)", () => {
  let hearth: TestHearth;
  let adapterModel: string;

  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });
    adapterModel = await defaultAccount(hearth).deployFolder(
      "py-lora",
      path.join(testModelDir, "examples", "hearth-tiny-lora"),
    );
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it("passes its unittest suite against a running Hearth", async () => {
    const chatMessages = [
      { role: "system" as const, content: "You are terse." },
      { role: "user" as const, content: "Tell me about the fire." },
    ];
    const expected = {
      model: MODEL,
      image_model: "accounts/hearth/models/hearth-sketch",
      max_body_bytes: MAX_BODY_BYTES,
      completion: { prompt: "The hearth ", max_tokens: 24, text: greedyText("The hearth ", 24) },
      multi: { prompts: ["One ", "Two "], max_tokens: 8, texts: [greedyText("One ", 8), greedyText("Two ", 8)] },
      chat: {
        messages: chatMessages,
        max_tokens: 48,
        content: cutAtStops(greedyText(renderDefaultChat(chatMessages), 48), defaultChatStops),
      },
      adapter: {
        model: adapterModel,
        prompt: "The ",
        max_tokens: 16,
        text: greedyText("The ", 16, { adapter: true }),
        base_text: greedyText("The ", 16),
      },
    };
    const run = await runPython(["-m", "unittest", "discover", "-s", "tests", "-v"], {
      HEARTH_TEST_BASE_URL: hearth.baseURL,
      HEARTH_API_KEY: hearth.apiKey,
      HEARTH_TEST_EXPECTED_JSON: JSON.stringify(expected),
    });
    expect(run.code, run.output).toBe(0);
    // Every test ran: a missing server or case would have skipped some.
    expect(run.output).not.toMatch(/skipped/);
    expect(run.output).toMatch(/^OK$/m);
  }, 180_000);
});

/** Runs Python asynchronously (the server under test answers on this process's event loop). */
function runPython(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, {
      cwd: CLIENT_DIR,
      env: { ...cleanEnv(), PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (data: Buffer) => (output += data.toString()));
    child.stderr.on("data", (data: Buffer) => (output += data.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** The environment without settings the client would pick up in place of the test's. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ["HEARTH_API_KEY", "SERVICE_API_KEY", "HEARTH_BASE_URL", "http_proxy", "HTTP_PROXY"])
    delete env[name];
  return env;
}

function cutAtStops(text: string, stops: readonly string[]): string {
  const at = Math.min(...stops.map((s) => (text.includes(s) ? text.indexOf(s) : text.length)));
  return text.slice(0, at);
}
