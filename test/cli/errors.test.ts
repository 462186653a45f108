import { fileStorageDir } from "../helpers/storage-dir.js";
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HearthApiError, HearthClient } from "../../src/cli/api-client.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { freePort } from "../helpers/net.js";
import { testModelDir } from "../helpers/test-models.js";
import { json, runHearthCli, tempConfigDir, type CliRun } from "../helpers/run-hearth.js";

/** Every exit code of the real `hearth` binary, each error one line on stderr saying what to do. */

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");

let hearth: TestHearth;
let config: Awaited<ReturnType<typeof tempConfigDir>>;
let client: HearthClient;
let folders: string;

beforeAll(async () => {
  [hearth, config, folders] = await Promise.all([
    startTestHearth({ worker: false }),
    tempConfigDir(),
    mkdtemp(path.join(os.tmpdir(), "hearth-cli-folders-")),
  ]);
  client = new HearthClient(hearth.url, hearth.apiKey);
});
afterAll(async () => {
  await hearth?.close();
  await config?.remove();
  if (folders) await rm(folders, { recursive: true, force: true });
});

/** Runs hearth with the test server and key (unless the args say otherwise). */
const signedIn = (args: string[], env: Record<string, string | undefined> = {}) =>
  runHearthCli(args, config.dir, { env: { HEARTH_BASE_URL: hearth.url, HEARTH_API_KEY: hearth.apiKey, ...env } });

function expectError(run: CliRun, code: number, message: RegExp | string) {
  expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(code);
  // Notes may come first; the error is the last line, and the only one.
  expect(run.stderr).toMatch(/(^|\n)error: [^\n]+\n$/);
  expect(run.stderr.match(/^error: /gm)).toHaveLength(1);
  if (typeof message === "string") expect(run.stderr).toContain(message);
  else expect(run.stderr).toMatch(message);
  expect(run.stdout).toBe("");
}

async function expectNoModel(modelId: string) {
  const error = await client.getModel("default", modelId).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(HearthApiError);
  expect((error as HearthApiError).status).toBe(404);
}

/** A copy of the PEFT example, changed by `edit`. */
async function exampleCopy(name: string, edit: (dir: string) => Promise<void> = async () => {}): Promise<string> {
  const dir = path.join(folders, name);
  await cp(PEFT_EXAMPLE, dir, { recursive: true });
  await edit(dir);
  return dir;
}

async function editConfig(dir: string, change: Record<string, unknown>) {
  const file = path.join(dir, "adapter_config.json");
  await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, "utf8")), ...change }));
}

describe("exit code 2: usage errors, and folders that fail the local checks (nothing is sent)", () => {
  it("refuses bad arguments and options", async () => {
    expectError(
      await signedIn(["create", "model"]),
      2,
      "Missing required argument 'model_id'. Run `hearth create model --help` for usage.",
    );
    expectError(await signedIn(["--output", "xml", "list", "models"]), 2, "Allowed choices are text, json");
    expectError(await signedIn(["frobnicate"]), 2, "Unknown command 'frobnicate'");
    expectError(await signedIn(["create", "model", "Not_An_ID", PEFT_EXAMPLE]), 2, 'Invalid model ID "Not_An_ID"');
    expectError(
      await signedIn(["update", "model", "x"]),
      2,
      "Nothing to update. Pass --display-name and/or --description.",
    );
    expectError(await signedIn(["list", "models", "--page-size", "0"]), 2, "--page-size 0");
    expectError(await signedIn(["--server", "localhost:8080", "whoami"]), 2, "Invalid server address");
    expectError(await signedIn(["create", "model", "x", path.join(folders, "absent")]), 2, "is not a folder");
    expect((await signedIn(["list"])).code).toBe(2); // a verb alone shows its help
    expect((await signedIn(["--help"])).code).toBe(0);
  });

  it("refuses a pickle with the server's own message, before creating anything", async () => {
    const dir = await exampleCopy("pickle", (d) => writeFile(path.join(d, "adapter_model.bin"), "not really a pickle"));
    const run = await signedIn(["create", "model", "pickled", dir]);
    await client.createModel("default", { modelId: "pickle-probe" });
    const server = await fetch(`${hearth.url}/v1/accounts/default/models/pickle-probe/files/adapter_model.bin`, {
      method: "PUT",
      headers: { authorization: `Bearer ${hearth.apiKey}` },
      body: "x",
    });
    const serverMessage = ((await server.json()) as { error: { message: string } }).error.message;
    expect(serverMessage).toMatch(/^adapter_model\.bin: PyTorch pickle files are not accepted/);
    expectError(run, 2, serverMessage);
    expect(run.stderr).toContain("nothing was uploaded");
    await expectNoModel("pickled");
  });

  it("refuses broken JSON, a config that disowns the weights, a rank mismatch and mixed formats", async () => {
    const cases: [string, (dir: string) => Promise<void>, string][] = [
      [
        "bad-json",
        (d) => writeFile(path.join(d, "adapter_config.json"), "{ nope"),
        "adapter_config.json: is not valid UTF-8 JSON",
      ],
      [
        "bad-hearth-json",
        (d) => writeFile(path.join(d, "hearth.json"), '{"base": 1}'),
        'hearth.json: unknown key "base"',
      ],
      ["dora", (d) => editConfig(d, { use_dora: true }), "DoRA adapters (use_dora) are not supported"],
      [
        "targets",
        (d) => editConfig(d, { target_modules: ["q_proj"] }),
        "which target_modules in adapter_config.json does not select",
      ],
      ["rank", (d) => editConfig(d, { r: 8 }), "has rank 16, but adapter_config.json gives lm_head rank 8"],
      [
        "truncated",
        (d) => writeFile(path.join(d, "adapter_model.safetensors"), Buffer.alloc(4)),
        "adapter_model.safetensors: not a safetensors file",
      ],
      [
        "mixed",
        (d) =>
          cp(
            path.join(testModelDir, "examples", "hearth-tiny-lora-gguf", "adapter.gguf"),
            path.join(d, "adapter.gguf"),
          ),
        "not both",
      ],
      ["no-weights", (d) => rm(path.join(d, "adapter_model.safetensors")), "adapter_model.safetensors: missing"],
    ];
    for (const [name, edit, message] of cases) {
      const run = await signedIn(["create", "model", name, await exampleCopy(name, edit)]);
      expectError(run, 2, message);
      await expectNoModel(name);
    }
  });

  it("uploads only the adapter files of a folder, with a note about the rest", async () => {
    const dir = await exampleCopy("with-extras", async (d) => {
      await writeFile(path.join(d, "README.md"), "# my adapter\n");
      await mkdir(path.join(d, "checkpoint-1"));
    });
    const run = await signedIn(["create", "model", "with-extras", dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("Not uploading README.md, checkpoint-1/: not adapter files.");
    const model = await client.getModel("default", "with-extras");
    expect(model.files?.map((f) => f.name)).toEqual([
      "adapter_config.json",
      "adapter_model.safetensors",
      "hearth.json",
    ]);
  });
});

describe("exit code 3: not signed in", () => {
  it("without a key, with a refused key, with a missing profile", async () => {
    expectError(
      await signedIn(["list", "models"], { HEARTH_API_KEY: undefined }),
      3,
      "Not signed in. Run `hearth signin`",
    );
    expectError(
      await signedIn(["whoami"], { HEARTH_API_KEY: "hth_not_a_key_at_all_000000" }),
      3,
      "The server refused the API key: Invalid API key.",
    );
    expectError(
      await signedIn(["--profile", "nobody", "whoami"], { HEARTH_API_KEY: undefined }),
      3,
      'There is no profile "nobody"',
    );
    const signin = await runHearthCli(["signin", "--server", hearth.url], config.dir, {
      input: "hth_not_a_key_at_all_000000\n",
    });
    expectError(signin, 3, `The server at ${hearth.url} refused this API key (Invalid API key)`);
    await expect(stat(path.join(config.dir, "auth.ini"))).rejects.toThrow(/ENOENT/);
    expectError(
      await runHearthCli(["signin", "--server", hearth.url], config.dir, { input: "" }),
      2,
      "No API key was given",
    );
  });

  it("takes the key from SERVICE_API_KEY too", async () => {
    const run = await signedIn(["whoami", "--quiet"], { HEARTH_API_KEY: undefined, SERVICE_API_KEY: hearth.apiKey });
    expect(run.stdout).toBe("default\n");
  });
});

describe("exit code 4: not found", () => {
  it("for a model or an account that does not exist", async () => {
    expectError(
      await signedIn(["get", "model", "nope"]),
      4,
      "The model accounts/default/models/nope does not exist or you do not have access to it. See the models with `hearth list models`.",
    );
    expectError(await signedIn(["delete", "model", "nope"]), 4, "does not exist");
    expectError(await signedIn(["deploy", "nope"]), 4, "does not exist");
    expectError(
      await signedIn(["--account-id", "someone-else", "list", "models"]),
      4,
      "See your accounts with `hearth list accounts`.",
    );
  });
});

describe("exit code 1: the server refused or failed", () => {
  it("a taken ID, a model that is not READY, a deployed model", async () => {
    await client.createModel("default", { modelId: "taken" });
    expectError(
      await signedIn(["create", "model", "taken", PEFT_EXAMPLE]),
      1,
      "The model ID taken is taken in account default. Choose another ID",
    );
    expectError(
      await signedIn(["deploy", "taken"]),
      1,
      "accounts/default/models/taken cannot be deployed: it is UPLOADING.",
    );

    expect((await signedIn(["create", "model", "deployed", PEFT_EXAMPLE, "--quiet"])).stdout).toBe(
      "accounts/default/models/deployed\n",
    );
    expect(json(await signedIn(["deploy", "deployed", "--output", "json"])).deployment.state).toBe("DEPLOYING");
    expectError(await signedIn(["delete", "model", "deployed"]), 1, "or pass --force");
    expect((await signedIn(["delete", "model", "deployed", "--force"])).code).toBe(0);
  });

  it("a deployment that FAILED, with its reason", async () => {
    expect((await signedIn(["create", "model", "breaks", PEFT_EXAMPLE, "--quiet"])).code).toBe(0);
    // Spoil the stored weights behind the server's back: converting them for llama.cpp fails.
    await writeFile(
      path.join(fileStorageDir(hearth.config), "models", "default", "breaks", "files", "adapter_model.safetensors"),
      "spoiled",
    );
    const run = await signedIn(["deploy", "breaks", "--wait"]);
    expectError(
      run,
      1,
      /\nerror: The deployment of accounts\/default\/models\/breaks FAILED: .+\. Clear it with `hearth undeploy breaks`, then deploy again\.\n$/,
    );
    expect(json(await signedIn(["undeploy", "breaks", "--output", "json"])).deployment).toBeNull();
  });

  it("validation that fails on the server leaves the model FAILED and says how to go on", async () => {
    const dir = await exampleCopy("wrong-base", (d) =>
      writeFile(path.join(d, "hearth.json"), '{"base_model": "accounts/hearth/models/nope"}'),
    );
    const run = await signedIn(["create", "model", "wrong-base", dir]);
    expectError(
      run,
      1,
      /\nerror: The server refused the adapter: .+; accounts\/default\/models\/wrong-base is FAILED\. .*--resume/,
    );
    expect((await client.getModel("default", "wrong-base")).state).toBe("FAILED");
  });

  it("a server that does not answer", async () => {
    const port = await freePort();
    expectError(
      await signedIn(["whoami"], { HEARTH_BASE_URL: `http://127.0.0.1:${port}` }),
      1,
      `Cannot reach Hearth at http://127.0.0.1:${port} (ECONNREFUSED). Is it running?`,
    );
  });
});
