import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { HearthClient } from "../../src/cli/api-client.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { testModelDir } from "../helpers/test-models.js";
import { finished, runHearthCli, startHearthCli, tempConfigDir } from "../helpers/run-hearth.js";
import { startSlowProxy, type SlowProxy } from "../helpers/slow-proxy.js";

/**
 * Ctrl-C during `hearth create model`: the upload is aborted, the server keeps nothing of
 * the file being sent, the model stays UPLOADING (never READY), the CLI says how to resume
 * or delete and exits with 130; `--resume` then finishes the job. A slow proxy between the
 * CLI and Hearth makes "during the upload" certain.
 */

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");

let hearth: TestHearth;
let proxy: SlowProxy;
let config: Awaited<ReturnType<typeof tempConfigDir>>;

beforeAll(async () => {
  [hearth, config] = await Promise.all([startTestHearth({ worker: false }), tempConfigDir()]);
  proxy = await startSlowProxy(hearth.url, /^PUT \S+\/files\/adapter_model\.safetensors /);
});
afterAll(async () => {
  await proxy?.close();
  await hearth?.close();
  await config?.remove();
});

it("Ctrl-C during the upload leaves the model UPLOADING, says how to go on, and --resume finishes it", async () => {
  const env = { HEARTH_API_KEY: hearth.apiKey };
  const child = startHearthCli(["--server", proxy.url, "create", "model", "interrupted", PEFT_EXAMPLE], config.dir, {
    env,
  });
  const run = finished(child);
  await proxy.forwarded(8 * 1024); // of 36 KiB, at 20 KiB/s
  child.kill("SIGINT");
  const { code, stdout, stderr } = await run;

  expect(code, stderr).toBe(130);
  expect(stdout).toBe("");
  const lastLine = stderr.trimEnd().split("\n").at(-1);
  expect(lastLine).toBe(
    "error: Upload interrupted: accounts/default/models/interrupted stays UPLOADING (it cannot be deployed; the interrupted file was not kept). " +
      `Resume with \`hearth create model interrupted ${PEFT_EXAMPLE} --resume\`, or remove it with \`hearth delete model interrupted\`.`,
  );
  const client = new HearthClient(hearth.url, hearth.apiKey);
  const model = await client.getModel("default", "interrupted");
  expect(model.state).toBe("UPLOADING");
  expect(model.files?.map((f) => f.name)).toEqual(["adapter_config.json"]);

  const resumed = await runHearthCli(
    ["create", "model", "interrupted", PEFT_EXAMPLE, "--resume", "--quiet"],
    config.dir,
    {
      env: { ...env, HEARTH_BASE_URL: hearth.url },
    },
  );
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(resumed.stdout).toBe("accounts/default/models/interrupted\n");
  expect((await client.getModel("default", "interrupted")).state).toBe("READY");
});
