import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { openBlobStore } from "../src/storage/open-blob-store.js";
import { startComposeDeployment, type ComposeDeployment } from "./helpers/compose-deployment.js";
import { eventually } from "./helpers/eventually.js";
import type { TestHearth } from "./helpers/hearth.js";
import { management } from "./helpers/management.js";
import { greedyText } from "./helpers/oracle.js";
import { S3_CREDENTIALS, startS3Server, type S3Server } from "./helpers/s3-server.js";
import { testModelDir } from "./helpers/test-models.js";

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");
const PROMPT = "The ";

// docker-compose.yml's deployment, run for real as local processes: 2 API replicas behind a
// round-robin proxy, 3 workers, one PostgreSQL, one Redis, and storage on S3 (the compose
// file's) or on a shared directory (a volume).
describe.each(["s3", "a shared directory"] as const)("the compose deployment, storage on %s", (storage) => {
  let s3: S3Server | undefined;
  let deployment: ComposeDeployment;

  beforeAll(async () => {
    s3 = storage === "s3" ? await startS3Server() : undefined;
    deployment = await startComposeDeployment({ apis: 2, workers: 3, ...(s3 ? { s3 } : {}) });
  }, 240_000);
  afterAll(async () => {
    await deployment?.close();
    await s3?.close();
  }, 60_000);

  const on = (url: string) => management({ url } as TestHearth, "default", deployment.adminKey);
  const openai = (url: string) => new OpenAI({ apiKey: deployment.adminKey, baseURL: `${url}/v1`, maxRetries: 0 });
  const complete = async (url: string, model: string) =>
    (await openai(url).completions.create({ model, prompt: PROMPT, max_tokens: 24, temperature: 0 })).choices[0]!.text;

  it("deploys through one API, serves through the other and through the balancer, undeploys and deletes", async () => {
    const [first, second] = deployment.apis as [string, string];
    const model = await on(first).deployFolder("scaled-lora", PEFT_EXAMPLE);
    const adapted = greedyText(PROMPT, 24, { adapter: true });
    expect(await complete(second, model)).toBe(adapted);
    // Requests through the balancer alternate between the APIs; the workers share the jobs.
    const texts = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        complete(deployment.proxy, i % 3 === 0 ? "accounts/hearth/models/hearth-tiny" : model),
      ),
    );
    expect(texts).toEqual(Array.from({ length: 9 }, (_, i) => (i % 3 === 0 ? greedyText(PROMPT, 24) : adapted)));
    const ready = (await (await fetch(`${second}/readyz`)).json()) as { workers: number };
    expect(ready.workers).toBe(3);
    // More requests at once than one worker takes (4): several workers decoded them.
    await eventually(async () => {
      const metrics = await (
        await fetch(`${second}/metrics`, { headers: { authorization: `Bearer ${deployment.adminKey}` } })
      ).text();
      const busy = metrics
        .split("\n")
        .filter((l) => l.startsWith("hearth_worker_decode_step_seconds_count{") && Number(l.split(" ").pop()) > 0);
      expect(new Set(busy.map((l) => /worker="([^"]+)"/.exec(l)?.[1])).size).toBeGreaterThanOrEqual(2);
    }, 10_000);

    expect((await on(second).undeploy("scaled-lora")).status).toBe(200);
    await on(first).waitForDeployment("scaled-lora", null);
    await expect(complete(deployment.proxy, model)).rejects.toMatchObject({ status: 404 });
    expect((await on(first).call("DELETE", "/v1/accounts/default/models/scaled-lora")).status).toBe(200);
    expect((await on(second).getModel("scaled-lora")).status).toBe(404);
    // The test reads the bucket with the deployment's credentials (the AWS SDK takes them from the environment).
    Object.assign(process.env, s3 ? S3_CREDENTIALS : {});
    const store = openBlobStore(loadConfig(deployment.storageEnv));
    expect(await store.list("models/default/scaled-lora/")).toEqual([]);
  }, 120_000);
});
