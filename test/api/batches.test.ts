import { eq } from "drizzle-orm";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batches } from "../../src/db/schema/batches.js";
import { usageRecords } from "../../src/db/schema/usage.js";
import { eventually } from "../helpers/eventually.js";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { createTestAccount } from "../helpers/management.js";

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

interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: OpenAI.ChatCompletion } | null;
  error: { code: string; message: string } | null;
}

// The files and batches APIs through the official SDK, against a real Hearth (PGlite, Redis, a
// real worker with hearth-tiny): upload, create, poll, read the output; validation, cancel,
// isolation between accounts.
describe("batches", () => {
  let hearth: TestHearth;
  let client: OpenAI;

  beforeAll(async () => {
    hearth = await startTestHearth({ env: { HEARTH_BATCH_CONCURRENCY: "4" } });
    client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, maxRetries: 0 });
  }, 60_000);
  afterAll(() => hearth?.close());

  const upload = async (text: string, name = "input.jsonl") =>
    client.files.create({ file: await toFile(Buffer.from(text), name), purpose: "batch" });
  const ended = (id: string, status: OpenAI.Batch["status"], timeoutMs = 60_000) =>
    eventually(async () => {
      const batch = await client.batches.retrieve(id);
      expect(batch.status).toBe(status);
      return batch;
    }, timeoutMs);
  const linesOf = async (fileId: string) =>
    (await (await client.files.content(fileId)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as OutputLine);

  it("runs a file of chat requests to one answer each, equal to the same request asked directly", async () => {
    const prompts = ["The hearth", "A warm fire", "Winter nights are", "The kettle sings", "Snow falls"];
    const file = await upload(chatLines(prompts));
    expect(file).toMatchObject({ object: "file", purpose: "batch", filename: "input.jsonl", status: "processed" });
    expect(file.bytes).toBe(Buffer.byteLength(chatLines(prompts)));

    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { purpose: "test" },
    });
    expect(created).toMatchObject({ object: "batch", status: "validating", input_file_id: file.id });
    const batch = await ended(created.id, "completed");
    expect(batch.request_counts).toEqual({ total: 5, completed: 5, failed: 0 });
    expect(batch.error_file_id).toBeNull();
    expect(batch.metadata).toEqual({ purpose: "test" });
    for (const at of ["in_progress_at", "finalizing_at", "completed_at"] as const)
      expect(batch[at]).toBeTypeOf("number");

    const output = await linesOf(batch.output_file_id!);
    expect(output.map((l) => l.custom_id).sort()).toEqual(prompts.map((_, i) => `q${i}`));
    for (const line of output) {
      const prompt = prompts[Number(line.custom_id.slice(1))]!;
      const direct = await client.chat.completions.create({
        model: TINY,
        messages: [{ role: "user", content: prompt }],
        max_tokens: 8,
        temperature: 0,
      });
      expect(line.error).toBeNull();
      expect(line.response!.status_code).toBe(200);
      expect(line.response!.body.choices[0]!.message.content).toBe(direct.choices[0]!.message.content);
    }

    // Each line's usage is metered, marked with its batch.
    const records = await eventually(async () => {
      const rows = await hearth.api.database.db.select().from(usageRecords).where(eq(usageRecords.batchId, batch.id));
      expect(rows).toHaveLength(5);
      return rows;
    }, 10_000);
    expect(new Set(records.map((r) => r.requestId))).toEqual(new Set(output.map((l) => l.response!.request_id)));

    // Listed, newest first; the output file too, and it counts as the account's.
    const listed = await client.batches.list({ limit: 10 });
    expect(listed.data.map((b) => b.id)).toContain(batch.id);
    const files = await client.files.list();
    expect(files.data.map((f) => f.id)).toEqual(expect.arrayContaining([file.id, batch.output_file_id]));
  }, 120_000);

  it("fails a batch with a bad line at validation, naming the line, before any line runs", async () => {
    const good = chatLines(["one", "two"]).split("\n");
    const text = [
      ...good,
      '{"custom_id": "bad", "method": "POST", "url": "/v1/chat/completions", "body": {"model": 3}}',
    ].join("\n");
    const file = await upload(text);
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const batch = await ended(created.id, "failed", 30_000);
    expect(batch.errors?.data).toEqual([
      expect.objectContaining({ line: 3, param: "body.model", code: "invalid_request" }),
    ]);
    expect(batch.request_counts).toEqual({ total: 0, completed: 0, failed: 0 });
    const rows = await hearth.api.database.db.select().from(usageRecords).where(eq(usageRecords.batchId, batch.id));
    expect(rows).toHaveLength(0);

    // Duplicate custom_ids and another endpoint's lines are refused the same way.
    const twice = await upload(`${good[0]}\n${good[0]}`);
    const dup = await client.batches.create({
      input_file_id: twice.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect((await ended(dup.id, "failed", 30_000)).errors?.data?.[0]).toMatchObject({ line: 2, param: "custom_id" });
  }, 60_000);

  it("cancels a running batch: no new line starts, and what ran is kept", async () => {
    const prompts = Array.from({ length: 40 }, (_, i) => `Line ${i} of a long batch`);
    const file = await upload(chatLines(prompts, 300));
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await ended(created.id, "in_progress", 30_000);
    await expect(client.files.delete(file.id)).rejects.toMatchObject({ status: 409 });
    const cancelling = await client.batches.cancel(created.id);
    expect(["cancelling", "cancelled"]).toContain(cancelling.status);
    const batch = await ended(created.id, "cancelled", 30_000);
    expect(batch.request_counts!.completed).toBeLessThan(40);
    const errors = await linesOf(batch.error_file_id!);
    const unrun = errors.filter((l) => l.error?.code === "batch_cancelled");
    expect(unrun.length + batch.request_counts!.completed + batch.request_counts!.failed).toBe(40);
    // Its input can go now that it has ended (while it ran, that was a conflict).
    await client.files.delete(file.id);
    await expect(client.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  }, 90_000);

  it("expires a batch whose window passes while it runs: what ran is kept, the rest listed as expired", async () => {
    const prompts = Array.from({ length: 40 }, (_, i) => `Line ${i} of a batch that runs out of time`);
    const file = await upload(chatLines(prompts, 300));
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "1h" as "24h", // the SDK types only OpenAI's window; Hearth takes 1h to 7d
    });
    await ended(created.id, "in_progress", 30_000);
    // The hour is up (the runner reads the window from the batch's row as it renews its lease).
    await hearth.api.database.db.update(batches).set({ expiresAt: new Date() }).where(eq(batches.id, created.id));
    const batch = await ended(created.id, "expired", 30_000);
    expect(batch.expired_at).toBeTypeOf("number");
    const errors = await linesOf(batch.error_file_id!);
    const unrun = errors.filter((l) => l.error?.code === "batch_expired");
    expect(unrun.length).toBeGreaterThan(0);
    expect(unrun.length + batch.request_counts!.completed + batch.request_counts!.failed).toBe(40);
  }, 90_000);

  it("shows an account only its own files and batches, and refuses files that are not a batch's input", async () => {
    const other = await createTestAccount(hearth, "other-batches");
    const stranger = new OpenAI({ baseURL: hearth.baseURL, apiKey: other.apiKey, maxRetries: 0 });
    const file = await upload(chatLines(["mine"]));
    await expect(stranger.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.files.content(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.files.delete(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      stranger.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    ).rejects.toMatchObject({ status: 404 });
    expect((await stranger.files.list()).data).toEqual([]);
    await expect(
      client.files.create({ file: await toFile(Buffer.from("{}"), "x.jsonl"), purpose: "fine-tune" }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      client.batches.create({
        input_file_id: file.id,
        endpoint: "/v1/chat/completions",
        completion_window: "30d" as "24h",
      }),
    ).rejects.toMatchObject({ status: 400 });
  });
});
