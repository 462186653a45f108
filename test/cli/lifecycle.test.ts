import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HearthClient } from "../../src/cli/api-client.js";
import { parseIni } from "../../src/cli/config-file.js";
import { HEARTH_TINY_REF } from "../../src/models/factory/demo-models.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { testModelDir } from "../helpers/test-models.js";
import { json, runHearthCli, tempConfigDir, type CliRun } from "../helpers/run-hearth.js";

/**
 * The whole life of an adapter driven by the real `hearth` binary against a started Hearth:
 * signin from piped stdin → list accounts → create model from the example folder → list →
 * get → update → deploy --wait → a query through the API → undeploy --wait → delete.
 * Once with text output (the PEFT example), once with JSON output (the GGUF example).
 */

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");
const GGUF_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf");

let hearth: TestHearth;
let config: Awaited<ReturnType<typeof tempConfigDir>>;
let client: HearthClient;

beforeAll(async () => {
  [hearth, config] = await Promise.all([startTestHearth(), tempConfigDir()]);
  client = new HearthClient(hearth.url, hearth.apiKey);
});
afterAll(async () => {
  await hearth?.close();
  await config?.remove();
});

async function hearthCli(args: string[], input?: string): Promise<CliRun> {
  const run = await runHearthCli(args, config.dir, { input });
  expect(run.code, `hearth ${args.join(" ")}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return run;
}

async function complete(model: string): Promise<string> {
  const response = await fetch(`${hearth.baseURL}/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${hearth.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model, prompt: "The ", max_tokens: 8, temperature: 0 }),
  });
  const body = (await response.json()) as { choices?: { text: string }[] };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.choices![0]!.text;
}

describe("hearth, for people (--output text)", () => {
  const name = "accounts/default/models/cli-text";

  it("signs in with the key on stdin and stores it in auth.ini (mode 0600)", async () => {
    const run = await hearthCli(["signin", "--server", `${hearth.url}/v1`], `${hearth.apiKey}\n`);
    expect(run.stdout).toContain(
      `Signed in to ${hearth.url} as account default with key ${hearth.apiKey.slice(0, 12)}… (inference, models, admin).`,
    );
    expect(run.stdout).toMatch(/^ID\s+DISPLAY NAME\s+ENTERPRISE\s+MAX DEPLOYED\s+CREATED$/m);
    expect(run.stdout).toMatch(/^default\s+/m);
    const file = path.join(config.dir, "auth.ini");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(parseIni(await readFile(file, "utf8")).get("default")).toEqual({
      server: hearth.url,
      api_key: hearth.apiKey,
      account_id: "default",
    });
  });

  it("says who the key is and lists its accounts", async () => {
    const who = await hearthCli(["whoami"]);
    expect(who.stdout).toMatch(/^Account:\s+default \(/m);
    expect(who.stdout).toMatch(
      new RegExp(`^Key:\\s+${hearth.apiKey.slice(0, 12)}… \\(scopes inference, models, admin`, "m"),
    );
    expect(who.stdout).toMatch(new RegExp(`^Server:\\s+${hearth.url}$`, "m"));
    expect((await hearthCli(["list", "accounts"])).stdout).toMatch(/^default\s+\S/m);
    expect((await hearthCli(["list", "accounts", "--quiet"])).stdout).toBe("default\n");
  });

  it("creates a model from the example folder: checks, uploads, validates", async () => {
    const run = await hearthCli(["create", "model", "cli-text", PEFT_EXAMPLE, "--display-name", "CLI text"]);
    expect(run.stdout).toContain(`${name} is READY (peft adapter, rank 16, for ${HEARTH_TINY_REF}).`);
    expect(run.stdout).toContain("hearth deploy cli-text --wait");
    expect(run.stderr).toContain("Uploaded adapter_model.safetensors (36 KiB)");
  });

  it("lists, gets and updates it", async () => {
    const builtIn = await hearthCli(["list", "models", "--account-id", "hearth"]);
    expect(builtIn.stdout).toMatch(/^hearth-sketch\s+image\s+-\s+READY/m);
    expect(builtIn.stdout).toMatch(/^hearth-tiny\s+base\s+-\s+READY/m);
    const list = await hearthCli(["list", "models"]);
    expect(list.stdout).toMatch(/^ID\s+KIND\s+BASE MODEL\s+STATE\s+DEPLOYMENT\s+CREATED$/m);
    expect(list.stdout).toMatch(
      new RegExp(
        `^cli-text\\s+lora\\s+${HEARTH_TINY_REF}\\s+READY\\s+-\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`,
        "m",
      ),
    );
    const get = await hearthCli(["get", "model", "cli-text"]);
    expect(get.stdout).toMatch(new RegExp(`^Name:\\s+${name}$`, "m"));
    expect(get.stdout).toMatch(/^State:\s+READY$/m);
    expect(get.stdout).toMatch(
      /^Files:\s+adapter_config\.json \(285 B\), adapter_model\.safetensors \(36 KiB\), hearth\.json \(52 B\)$/m,
    );
    const update = await hearthCli([
      "update",
      "model",
      "cli-text",
      "--display-name",
      "CLI text v2",
      "--description",
      "Talks like the corpus",
    ]);
    expect(update.stdout).toMatch(/^Display name:\s+CLI text v2$/m);
    expect(update.stdout).toMatch(/^Description:\s+Talks like the corpus$/m);
    expect((await hearthCli(["get", "model", "cli-text", "--quiet"])).stdout).toBe(`${name}\n`);
  });

  it("deploys it and waits; the API then answers with it", async () => {
    const run = await hearthCli(["deploy", "cli-text", "--wait"]);
    expect(run.stdout).toContain(`${name} is DEPLOYED.`);
    expect(run.stderr).toContain(`Deploying ${name}: `);
    expect(await complete(name)).not.toBe(await complete(HEARTH_TINY_REF));
    expect((await hearthCli(["list", "models"])).stdout).toMatch(/^cli-text\s+lora\s+\S+\s+READY\s+DEPLOYED\s/m);
  });

  it("undeploys and deletes it", async () => {
    const undeploy = await hearthCli(["undeploy", "cli-text", "--wait"]);
    expect(undeploy.stdout).toContain(`${name} is READY`);
    expect(undeploy.stdout).toContain("Not deployed.");
    expect((await client.getModel("default", "cli-text")).deployment).toBeNull();
    expect((await hearthCli(["delete", "model", "cli-text"])).stdout).toBe(`Deleted ${name}.\n`);
    const gone = await runHearthCli(["get", "model", "cli-text"], config.dir);
    expect(gone.code).toBe(4);
  });
});

describe("hearth, for scripts (--output json)", () => {
  const name = "accounts/default/models/cli-json";
  const cli = async (args: string[], input?: string) =>
    json(await hearthCli(["--output", "json", "--profile", "scripts", ...args], input));

  it("signs in to a second profile and reports as one JSON document", async () => {
    const signin = await cli(["signin", "--server", hearth.url], hearth.apiKey);
    expect(signin).toMatchObject({
      server: hearth.url,
      profile: "scripts",
      accountId: "default",
      keyPrefix: hearth.apiKey.slice(0, 12),
      scopes: ["inference", "models", "admin"],
    });
    expect(signin.accounts.map((a: { accountId: string }) => a.accountId)).toEqual(["default"]);
    const profiles = parseIni(await readFile(path.join(config.dir, "auth.ini"), "utf8"));
    expect([...profiles.keys()].sort()).toEqual(["default", "scripts"]);
    expect(await cli(["whoami"])).toMatchObject({
      server: hearth.url,
      accountId: "default",
      keyPrefix: hearth.apiKey.slice(0, 12),
    });
    expect((await cli(["list", "accounts"])).accounts[0]).toMatchObject({
      accountId: "default",
      name: "accounts/default",
    });
  });

  it("creates, lists (every page), gets and updates a GGUF adapter", async () => {
    const created = await cli(["create", "model", "cli-json", GGUF_EXAMPLE, "--description", "from JSON"]);
    expect(created).toMatchObject({
      name,
      state: "READY",
      format: "gguf",
      baseModel: HEARTH_TINY_REF,
      description: "from JSON",
    });
    expect(created.files.map((f: { name: string }) => f.name)).toEqual(["adapter.gguf", "hearth.json"]);
    for (const id of ["cli-page-a", "cli-page-b"])
      expect((await client.createModel("default", { modelId: id })).state).toBe("UPLOADING");
    const listed = await cli(["list", "models", "--page-size", "1"]);
    expect(listed.models.map((m: { modelId: string }) => m.modelId)).toEqual(["cli-json", "cli-page-a", "cli-page-b"]);
    expect((await cli(["get", "model", "cli-json"])).files).toHaveLength(2);
    expect(await cli(["update", "model", "cli-json", "--display-name", "JSON"])).toMatchObject({
      name,
      displayName: "JSON",
    });
  });

  it("deploys with --wait, is queried, undeploys with --wait and is deleted", async () => {
    expect((await cli(["deploy", "cli-json", "--wait"])).deployment).toMatchObject({ state: "DEPLOYED", reason: null });
    expect(await complete(name)).toEqual(expect.any(String));
    expect((await cli(["undeploy", "cli-json", "--wait"])).deployment).toBeNull();
    expect(await cli(["delete", "model", "cli-json"])).toEqual({ deleted: name });
    const versions = await cli(["version"]);
    expect(versions).toEqual({
      cli: expect.stringMatching(/^\d+\.\d+\.\d+/),
      server: { url: hearth.url, version: versions.cli },
    });
  });
});
