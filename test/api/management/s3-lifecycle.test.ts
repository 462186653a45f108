import { stat } from "node:fs/promises";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import type { BlobStore } from "../../../src/storage/blob-store.js";
import { openBlobStore } from "../../../src/storage/open-blob-store.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { defaultAccount, type Management } from "../../helpers/management.js";
import { greedyText } from "../../helpers/oracle.js";
import { S3_CREDENTIALS, startS3Server, type S3Server } from "../../helpers/s3-server.js";
import { testModelDir } from "../../helpers/test-models.js";

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");
const PROMPT = "The ";

// An adapter's whole life with storage on S3 (a real S3-protocol server): the API validates
// and converts from copies of the objects, the worker loads the artifact from its cache.
describe("an adapter's lifecycle on S3 storage", () => {
  let s3: S3Server;
  let hearth: TestHearth;
  let me: Management;
  let bucket: BlobStore;

  beforeAll(async () => {
    s3 = await startS3Server();
    await s3.createBucket("hearth-lifecycle");
    Object.assign(process.env, S3_CREDENTIALS);
    const env = s3.env("hearth-lifecycle", "prod");
    hearth = await startTestHearth({ env });
    me = defaultAccount(hearth);
    bucket = openBlobStore(loadConfig(env));
  });
  afterAll(async () => {
    await hearth?.close();
    await s3?.close();
  });

  it("uploads, validates, deploys, serves, undeploys and deletes an adapter, its files in the bucket", async () => {
    const name = await me.deployFolder("s3-lora", PEFT_EXAMPLE);
    const keys = await bucket.list("");
    expect(keys.filter((k) => k.startsWith("models/default/s3-lora/files/")).length).toBeGreaterThan(1);
    const artifact = keys.find((k) => k.startsWith("artifacts/lora/"));
    expect(artifact).toMatch(/^artifacts\/lora\/[0-9a-f]{64}\.gguf$/);
    expect(await bucket.stat(artifact!)).toMatchObject({ sha256: artifact!.slice(15, 79) });

    const openai = new OpenAI({ apiKey: hearth.apiKey, baseURL: hearth.baseURL });
    const answer = await openai.completions.create({ model: name, prompt: PROMPT, max_tokens: 24, temperature: 0 });
    expect(answer.choices[0]!.text).toBe(greedyText(PROMPT, 24, { adapter: true }));
    // The worker read the artifact from its own copy, in its artifact cache.
    const copy = path.join(hearth.config.artifactCache.dir, ...artifact!.split("/"));
    expect((await stat(copy)).size).toBe((await bucket.stat(artifact!))!.size);

    expect((await me.undeploy("s3-lora")).status).toBe(200);
    await me.waitForDeployment("s3-lora", null);
    expect((await me.call("DELETE", "/v1/accounts/default/models/s3-lora")).status).toBe(200);
    expect((await bucket.list("models/default/s3-lora/")).length).toBe(0);
  }, 60_000);
});
