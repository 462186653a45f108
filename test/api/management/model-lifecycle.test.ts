import { fileStorageDir } from "../../helpers/storage-dir.js";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTH_TINY_REF } from "../../../src/models/factory/demo-models.js";
import { writeAdapterToward, type TestAdapter } from "../../helpers/adapters.js";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { defaultAccount, type Management } from "../../helpers/management.js";
import { greedyText } from "../../helpers/oracle.js";
import { testModelDir } from "../../helpers/test-models.js";

const PEFT_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora");
const GGUF_EXAMPLE = path.join(testModelDir, "examples", "hearth-tiny-lora-gguf");
const PROMPT = "The ";

// The lifecycle over HTTP, on PostgreSQL, with a real worker and the OpenAI SDK as the client.
describe("model lifecycle", () => {
  let hearth: TestHearth;
  let me: Management;
  let openai: OpenAI;
  let scratch: string;
  let storage: string;

  beforeAll(async () => {
    hearth = await startTestHearth({ backend: "postgres" });
    me = defaultAccount(hearth);
    openai = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
    scratch = await mkdtemp(path.join(os.tmpdir(), "hearth-lifecycle-"));
    storage = fileStorageDir(hearth.config);
  });
  afterAll(async () => {
    await hearth?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const complete = async (model: string, prompt = PROMPT, maxTokens = 24) =>
    (await openai.completions.create({ model, prompt, max_tokens: maxTokens, temperature: 0 })).choices[0]!.text;

  it("creates, uploads, validates, deploys, serves, undeploys and deletes an adapter", async () => {
    const created = await me.createModel("my-lora", { displayName: "My LoRA", description: "a test" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "accounts/default/models/my-lora",
      kind: "lora",
      state: "UPLOADING",
      displayName: "My LoRA",
      deployment: null,
    });

    await me.uploadFolder("my-lora", PEFT_EXAMPLE);
    const validated = await me.validate("my-lora");
    expect(validated.status).toBe(200);
    expect(validated.body).toMatchObject({ state: "READY", baseModel: HEARTH_TINY_REF, format: "peft", rank: 16 });
    expect(validated.body.files.map((f: { name: string }) => f.name).sort()).toEqual([
      "adapter_config.json",
      "adapter_model.safetensors",
      "hearth.json",
    ]);

    // Not deployed yet: 404 "not deployed", through the SDK.
    await expect(complete("accounts/default/models/my-lora")).rejects.toMatchObject({ status: 404 });

    const deploying = await me.deploy("my-lora");
    expect(deploying.status).toBe(200);
    expect(["DEPLOYING", "DEPLOYED"]).toContain(deploying.body.deployment.state);
    const deployed = await me.waitForDeployment("my-lora", "DEPLOYED");
    expect(deployed.body.deployment.deployTime).toEqual(expect.any(String));

    const name = "accounts/default/models/my-lora";
    const text = await complete(name);
    expect(text).toBe(greedyText(PROMPT, 24, { adapter: true }));
    expect(text).not.toBe(greedyText(PROMPT, 24));
    // The base model is unchanged alongside.
    expect(await complete(HEARTH_TINY_REF)).toBe(greedyText(PROMPT, 24));

    // Streamed too.
    const stream = await openai.completions.create({
      model: name,
      prompt: PROMPT,
      max_tokens: 24,
      temperature: 0,
      stream: true,
    });
    let streamed = "";
    for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? "";
    expect(streamed).toBe(text);

    const listed = await openai.models.list();
    const entry = listed.data.find((m) => m.id === name) as unknown as { parent: string } | undefined;
    expect(entry?.parent).toBe(HEARTH_TINY_REF);

    // Deploying again changes nothing.
    expect((await me.deploy("my-lora")).body.deployment.state).toBe("DEPLOYED");

    const artifacts = await readdir(path.join(storage, "artifacts", "lora"));
    expect(artifacts).toHaveLength(1);

    const undeploying = await me.undeploy("my-lora");
    expect(undeploying.status).toBe(200);
    await me.waitForDeployment("my-lora", null);
    const gone: unknown = await complete(name).catch((e: unknown) => e);
    expect(gone).toMatchObject({ status: 404 });
    expect((gone as Error).message).toMatch(/not deployed/);
    expect((await openai.models.list()).data.map((m) => m.id)).not.toContain(name);

    const deleted = await me.call("DELETE", "/v1/accounts/default/models/my-lora");
    expect(deleted.status).toBe(200);
    expect((await me.getModel("my-lora")).status).toBe(404);
    const list = await me.call("GET", "/v1/accounts/default/models");
    expect(list.body.models.map((m: { modelId: string }) => m.modelId)).not.toContain("my-lora");
    expect(existsSync(path.join(storage, "models", "default", "my-lora"))).toBe(false);
    expect(await readdir(path.join(storage, "artifacts", "lora"))).toHaveLength(0);
  });

  it("serves two adapters on one base model at once, each with its own output", async () => {
    const other: TestAdapter = await writeAdapterToward(
      path.join(scratch, "zig"),
      "zig zag zig zag zoo zig zag zoom zig zag zig zap zag zig ",
    );
    const a = await me.deployFolder("twin-a", PEFT_EXAMPLE);
    const b = await me.deployFolder("twin-b", other.dir);
    const prompts = ["The ", "zig", "a hearth", "Hello"];
    const runs = prompts.flatMap((prompt) => [
      complete(a, prompt, 20).then((text) => expect(text).toBe(greedyText(prompt, 20, { adapter: true }))),
      complete(b, prompt, 20).then((text) => expect(text).toBe(other.greedy(prompt, 20))),
      complete(HEARTH_TINY_REF, prompt, 20).then((text) => expect(text).toBe(greedyText(prompt, 20))),
    ]);
    await Promise.all(runs);
    expect(other.greedy("zig", 20)).not.toBe(greedyText("zig", 20, { adapter: true }));
  });

  it("serves a ready GGUF adapter", async () => {
    const name = await me.deployFolder("gguf-lora", GGUF_EXAMPLE);
    const model = await me.getModel("gguf-lora");
    expect(model.body.format).toBe("gguf");
    expect(await complete(name)).toBe(greedyText(PROMPT, 24, { adapter: true }));
  });

  it("chats with the adapter's own template, which PATCH can change", async () => {
    const name = await me.deployFolder("chatty", GGUF_EXAMPLE);
    const template =
      "{% for message in messages %}<{{ message.role }}>{{ message.content }}{% endfor %}" +
      "{% if add_generation_prompt %}<assistant>{% endif %}";
    const patched = await me.call("PATCH", "/v1/accounts/default/models/chatty", {
      displayName: "Chatty",
      conversationConfig: { template },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ displayName: "Chatty", conversationConfig: { template } });
    const chat = await openai.chat.completions.create({
      model: name,
      messages: [{ role: "user", content: "Tell me" }],
      max_tokens: 16,
      temperature: 0,
    });
    expect(chat.choices[0]!.message.content).toBe(greedyText("<user>Tell me<assistant>", 16, { adapter: true }));

    for (const broken of ["", "{{ x }", "{{ x }}"]) {
      const bad = await me.call("PATCH", "/v1/accounts/default/models/chatty", {
        conversationConfig: { template: broken },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.param).toBe("conversationConfig.template");
    }
    expect((await me.getModel("chatty")).body.conversationConfig).toEqual({ template });

    // Embeddings come from base models only.
    const embedding: unknown = await openai.embeddings.create({ model: name, input: "x" }).catch((e: unknown) => e);
    expect(embedding).toMatchObject({ status: 400 });
  });

  it("bounds users' templates: one that hangs is refused at save time, one that hangs on long chats is quarantined", async () => {
    const name = await me.deployFolder("trapped", GGUF_EXAMPLE);
    const loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    const plain = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>";
    const patch = (template: string) =>
      me.call("PATCH", "/v1/accounts/default/models/trapped", { conversationConfig: { template } });

    // Checked in the API's sandbox, not on its main thread: the API answers while the check runs.
    const order: string[] = [];
    const refused = patch(loop + plain).then((reply) => {
      order.push("patch");
      return reply;
    });
    await new Promise((r) => setTimeout(r, 100));
    const health = await fetch(`${hearth.url}/healthz`);
    order.push("healthz");
    expect(health.status).toBe(200);
    const bad = await refused;
    expect(order).toEqual(["healthz", "patch"]);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: "conversationConfig.template" });
    expect(bad.body.error.message).toMatch(/longer than \d+ ms|more than \d+ MB of memory/);
    // Quarantined by that check: saving it again is refused without rendering it.
    const again = await patch(loop + plain);
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/stopped at .* and is refused until/);

    // Past the save-time probes (they go to 2,049 messages): it hangs only on longer chats.
    const trap = `{% if messages|length > 3000 %}${loop}{% endif %}${plain}`;
    expect((await patch(trap)).status).toBe(200);
    const long = Array.from(
      { length: 3001 },
      (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `m${i}` }) as const,
    );
    const short = () =>
      openai.chat.completions.create({
        model: name,
        messages: [{ role: "user", content: "Hi" }],
        max_tokens: 8,
        temperature: 0,
      });
    expect((await short()).choices[0]!.message.content).toBe(greedyText("<user>Hi<assistant>", 8, { adapter: true }));
    const [hung, base] = await Promise.all([
      openai.chat.completions.create({ model: name, messages: long, max_tokens: 4 }).catch((e: unknown) => e),
      // Everyone else is served meanwhile.
      complete(HEARTH_TINY_REF, PROMPT, 8),
    ]);
    expect(hung).toMatchObject({ status: 400 });
    expect((hung as Error).message).toMatch(
      /conversation template went past its bounds.*(longer than \d+ ms|more than \d+ MB of memory)/,
    );
    expect(base).toBe(greedyText(PROMPT, 8));
    // Quarantined: the model's chats are refused by the API before they are queued, short ones too.
    const quarantined = await short().catch((e: unknown) => e);
    expect(quarantined).toMatchObject({ status: 400, param: "model" });
    expect((quarantined as Error).message).toMatch(/chat template is quarantined\. .*stopped at .* refused until/);
    // The model's page says why.
    const signedIn = await fetch(`${hearth.url}/signin`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: hearth.url },
      body: new URLSearchParams({ api_key: hearth.apiKey }),
    });
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await fetch(`${hearth.url}/accounts/default/models/trapped`, { headers: { cookie } })).text();
    expect(page).toMatch(/Chats with this model are refused for now\. This chat template was stopped at/);
    // Another template is another matter: fixed, the model chats again.
    expect((await patch(plain)).status).toBe(200);
    expect((await short()).choices[0]!.message.content).toBe(greedyText("<user>Hi<assistant>", 8, { adapter: true }));
  });

  it("takes a template that writes only the messages' contents, on create, update and validate", async () => {
    const template = "{% for m in messages %}{{ m.content }}{% endfor %}";
    const created = await me.createModel("plain-template", { conversationConfig: { template } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const updated = await me.call("PATCH", "/v1/accounts/default/models/plain-template", {
      conversationConfig: { template: `${template}\n` },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    // From hearth.json, at validation.
    const folder = path.join(scratch, "plain-template");
    await cp(GGUF_EXAMPLE, folder, { recursive: true });
    await writeFile(
      path.join(folder, "hearth.json"),
      JSON.stringify({ base_model: HEARTH_TINY_REF, conversation_config: { template } }),
    );
    expect((await me.createModel("plain-files")).status).toBe(201);
    await me.uploadFolder("plain-files", folder);
    const validated = await me.validate("plain-files");
    expect(validated.status, JSON.stringify(validated.body)).toBe(200);
    expect(validated.body.state).toBe("READY");
  });

  it("a worker started after the deploy serves the model", async () => {
    const adapter = await writeAdapterToward(path.join(scratch, "late"), "late late later latest lately ", {
      format: "gguf",
    });
    const name = await me.deployFolder("late-lora", adapter.dir);
    await hearth.worker!.close(1_000);
    const fresh = await hearth.startWorker();
    expect(fresh.models).toContain("hearth-tiny");
    expect(await complete(name, "la", 16)).toBe(adapter.greedy("la", 16));
  });

  it("lets in-flight generations finish when the model is undeployed, and refuses new ones", async () => {
    const name = await me.deployFolder("draining", PEFT_EXAMPLE);
    const stream = await openai.completions.create({
      model: name,
      prompt: PROMPT,
      max_tokens: 400,
      temperature: 0,
      stream: true,
    });
    let text = "";
    let finish: string | null | undefined;
    let undeployed = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (!undeployed && text.length > 0) {
        undeployed = true;
        expect((await me.undeploy("draining")).status).toBe(200);
        // New requests are refused at once, while this one goes on.
        await expect(complete(name)).rejects.toMatchObject({ status: 404 });
      }
    }
    expect(undeployed).toBe(true);
    expect(finish).toBe("length");
    expect(text).toBe(greedyText(PROMPT, 400, { adapter: true }));
    await me.waitForDeployment("draining", null);
  });

  it("refuses to delete a deployed model unless forced, then undeploys and deletes it", async () => {
    await me.deployFolder("doomed", PEFT_EXAMPLE);
    const refused = await me.call("DELETE", "/v1/accounts/default/models/doomed");
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/force=true/);
    expect((await me.getModel("doomed")).body.deployment.state).toBe("DEPLOYED");

    const forced = await me.call("DELETE", "/v1/accounts/default/models/doomed?force=true");
    expect(forced.status).toBe(200);
    expect((await me.getModel("doomed")).status).toBe(404);
    await expect(complete("accounts/default/models/doomed")).rejects.toMatchObject({ status: 404 });
    expect(existsSync(path.join(storage, "models", "default", "doomed"))).toBe(false);
  });

  it("refuses to deploy a model that failed validation", async () => {
    expect((await me.createModel("broken")).status).toBe(201);
    await me.upload("broken", "adapter_config.json", "{ not json");
    const validated = await me.validate("broken");
    expect(validated.status).toBe(400);
    expect((await me.getModel("broken")).body.state).toBe("FAILED");
    const deploy = await me.deploy("broken");
    expect(deploy.status).toBe(400);
    expect(deploy.body.error.message).toMatch(/FAILED/);
    expect((await me.getModel("broken")).body.deployment).toBeNull();
  });
});
