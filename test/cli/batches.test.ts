import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../helpers/hearth.js";
import { greedyText } from "../helpers/oracle.js";
import { finished, json, runHearthCli, startHearthCli, tempConfigDir } from "../helpers/run-hearth.js";

/**
 * `hearth create batch`, `get batch`, `list batches`, `cancel batch` and the files' commands:
 * the real binary against a started Hearth with a worker and its batch runner.
 */

const TINY = "accounts/hearth/models/hearth-tiny";
const PROMPTS = ["The hearth ", "A warm fire ", "Winter nights "];

/** A batch input of completions, custom_id `q<i>`. */
function completionLines(prompts: readonly string[], maxTokens: number): string {
  return prompts
    .map((prompt, i) =>
      JSON.stringify({
        custom_id: `q${i}`,
        method: "POST",
        url: "/v1/completions",
        body: { model: TINY, prompt, max_tokens: maxTokens, temperature: 0 },
      }),
    )
    .join("\n");
}

interface OutputLine {
  custom_id: string;
  response: { status_code: number; body: { choices: { text: string }[] } } | null;
  error: unknown;
}

describe("hearth and batches", () => {
  let hearth: TestHearth;
  let config: Awaited<ReturnType<typeof tempConfigDir>>;
  let small: string;
  let long: string;
  let broken: string;

  beforeAll(async () => {
    [hearth, config] = await Promise.all([
      startTestHearth({ env: { HEARTH_BATCH_CONCURRENCY: "4" } }),
      tempConfigDir(),
    ]);
    small = path.join(config.dir, "small.jsonl");
    await writeFile(small, `${completionLines(PROMPTS, 8)}\n`);
    long = path.join(config.dir, "long.jsonl");
    const many = Array.from({ length: 200 }, (_, i) => `Line ${i} of a long batch `);
    await writeFile(long, completionLines(many, 300));
    broken = path.join(config.dir, "broken.jsonl");
    const bad = { custom_id: "bad", method: "POST", url: "/v1/completions", body: { model: 3, prompt: "x" } };
    await writeFile(broken, `${completionLines(PROMPTS.slice(0, 2), 4)}\n${JSON.stringify(bad)}\n`);
  });
  afterAll(async () => {
    await hearth?.close();
    await config?.remove();
  });
  const env = () => ({ HEARTH_API_KEY: hearth.apiKey, HEARTH_BASE_URL: hearth.url });
  const run = (args: string[]) => runHearthCli(args, config.dir, { env: env() });
  const ok = async (args: string[]) => {
    const result = await run(args);
    expect(result.code, `hearth ${args.join(" ")}\n${result.stdout}\n${result.stderr}`).toBe(0);
    return result;
  };

  let completedId: string;

  it("uploads a file, runs it as a batch to its end, and downloads answers equal to the greedy texts", async () => {
    const created = await ok([
      "create",
      "batch",
      small,
      "--endpoint",
      "/v1/completions",
      "--metadata",
      "job=test",
      "owner=ana",
      "--wait",
    ]);
    expect(created.stderr).toMatch(/^Uploaded small\.jsonl \(\d+ B\)$/m);
    expect(created.stderr).toMatch(/^Created batch_\S+; waiting for it to end/m);
    const lines = created.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^batch_\S+ completed: 3 of 3 requests answered, 0 failed\.$/);
    completedId = lines[0]!.split(" ")[0]!;
    const download = new RegExp(
      `^Download the answers: hearth get file (file-\\S+-output) --out ${completedId}-output\\.jsonl$`,
    );
    expect(lines[1]).toMatch(download);
    expect(lines).toHaveLength(2); // no error file: every line was answered
    const outputId = download.exec(lines[1]!)![1]!;

    const content = await ok(["get", "file", outputId]);
    const output = content.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as OutputLine);
    expect(output.map((l) => l.custom_id).sort()).toEqual(["q0", "q1", "q2"]);
    for (const line of output) {
      expect(line.error).toBeNull();
      expect(line.response!.status_code).toBe(200);
      expect(line.response!.body.choices[0]!.text).toBe(greedyText(PROMPTS[Number(line.custom_id.slice(1))]!, 8));
    }

    // --out: a file, or a folder; the same bytes.
    const saved = await ok(["get", "file", outputId, "--out", path.join(config.dir, "answers.jsonl")]);
    expect(saved.stdout.trim()).toMatch(
      new RegExp(`^Wrote ${outputId} \\(output\\.jsonl, [\\d.]+ K?i?B\\) to .*answers\\.jsonl\\.$`),
    );
    expect(await readFile(path.join(config.dir, "answers.jsonl"), "utf8")).toBe(content.stdout);
    const folder = `${path.join(config.dir, "results")}/`;
    const record = json(await ok(["get", "file", outputId, "--out", folder, "--output", "json"]));
    expect(record).toMatchObject({ id: outputId, object: "file", purpose: "batch_output", filename: "output.jsonl" });
    expect(await readFile(path.join(folder, `${outputId}.jsonl`), "utf8")).toBe(content.stdout);
  }, 90_000);

  it("shows and lists batches, for people and as the API's objects", async () => {
    const shown = await ok(["get", "batch", completedId]);
    expect(shown.stdout).toMatch(new RegExp(`^ID:\\s+${completedId}$`, "m"));
    expect(shown.stdout).toMatch(/^Status:\s+completed since \d{4}-\d\d-\d\d \d\d:\d\d UTC$/m);
    expect(shown.stdout).toMatch(/^Endpoint:\s+\/v1\/completions$/m);
    expect(shown.stdout).toMatch(/^Requests:\s+3: 3 answered, 0 failed, 0 not run$/m);
    expect(shown.stdout).toMatch(/^Metadata:\s+job=test, owner=ana$/m);
    expect(shown.stdout).toMatch(/^Error file:\s+-$/m);
    const doc = json(await ok(["get", "batch", completedId, "--output", "json"]));
    expect(doc).toMatchObject({
      id: completedId,
      object: "batch",
      status: "completed",
      endpoint: "/v1/completions",
      request_counts: { total: 3, completed: 3, failed: 0 },
      metadata: { job: "test", owner: "ana" },
      error_file_id: null,
    });
    expect(doc.output_file_id).toMatch(/^file-/);

    const listed = await ok(["list", "batches"]);
    const [header, ...rows] = listed.stdout.trim().split("\n");
    expect(header).toMatch(/^ID\s+STATUS\s+ENDPOINT\s+PROGRESS\s+CREATED$/);
    expect(rows).toContainEqual(
      expect.stringMatching(new RegExp(`^${completedId}\\s+completed\\s+/v1/completions\\s+3/3\\s+\\d{4}-`)),
    );
    const page = json(await ok(["list", "batches", "--output", "json"]));
    expect(page).toMatchObject({ object: "list", has_more: false });
    expect(page.data.map((b: { id: string }) => b.id)).toContain(completedId);
    expect((await ok(["list", "batches", "--quiet"])).stdout.split("\n")).toContain(completedId);
    expect(json(await ok(["get", "batch", completedId, "--wait", "--output", "json"])).status).toBe("completed");
    expect((await ok(["cancel", "batch", completedId])).stdout).toBe(
      `${completedId} had ended already (completed): nothing to cancel.\n`,
    );

    const files = await ok(["list", "files"]);
    expect(files.stdout.split("\n")[0]).toMatch(/^ID\s+PURPOSE\s+SIZE\s+FILENAME\s+CREATED$/);
    expect(files.stdout).toMatch(/^file-\S+\s+batch\s+\d+ B\s+small\.jsonl\s+/m);
  });

  it("fails a batch whose file has a bad line, naming the line, with exit code 1", async () => {
    const text = await run(["create", "batch", broken, "--endpoint", "/v1/completions", "--wait"]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toMatch(/^batch_\S+ failed: its input file was refused\.$/m);
    expect(text.stdout).toMatch(/^Errors in the input file:\n {2}line 3, body\.model: /m);
    expect(text.stderr.trimEnd().split("\n").at(-1)).toMatch(
      /^error: batch_\S+ failed: its input file was refused \(line 3, body\.model: .+\)\. Fix the file and create the batch again\.$/,
    );
    const doc = await run(["create", "batch", broken, "--endpoint", "/v1/completions", "--wait", "--output", "json"]);
    expect(doc.code).toBe(1);
    expect(json(doc)).toMatchObject({
      object: "batch",
      status: "failed",
      request_counts: { total: 0, completed: 0, failed: 0 },
      errors: { data: [{ line: 3, param: "body.model", code: "invalid_request" }] },
    });
  }, 60_000);

  it("stops waiting on Ctrl-C and leaves the batch running; cancel then stops it", async () => {
    const child = startHearthCli(["create", "batch", long, "--endpoint", "/v1/completions", "--wait"], config.dir, {
      env: env(),
    });
    const ran = finished(child);
    let stderr = "";
    await new Promise<void>((resolve) => {
      child.stderr!.on("data", (chunk: Buffer) => {
        stderr += chunk;
        // A progress line: the waiting (and its Ctrl-C handler) has begun, and the batch runs.
        if (/^batch_\S+: in_progress/m.test(stderr)) resolve();
      });
    });
    child.kill("SIGINT");
    const interrupted = await ran;
    expect(interrupted.code, interrupted.stderr).toBe(130);
    expect(interrupted.stdout).toBe("");
    const id = /^(batch_\S+): /m.exec(interrupted.stderr)![1]!;
    expect(interrupted.stderr.trimEnd().split("\n").at(-1)).toMatch(
      new RegExp(
        `^error: Stopped waiting; ${id} goes on: in_progress, \\d+/200( \\(\\d+ failed\\))? requests run\\. ` +
          `Wait again with \`hearth get batch ${id} --wait\`, or stop it with \`hearth cancel batch ${id}\`\\.$`,
      ),
    );
    const running = json(await ok(["get", "batch", id, "--output", "json"]));
    expect(running.cancelling_at).toBeNull();

    // Its input cannot go while it runs: the server says why, the CLI adds no model hint.
    const busy = await run(["delete", "file", running.input_file_id]);
    expect(busy.code).toBe(1);
    expect(busy.stderr.trim()).toBe(
      `error: Batch ${id} reads ${running.input_file_id} and has not ended: cancel it first.`,
    );

    const cancelled = await ok(["cancel", "batch", id, "--wait"]);
    expect(cancelled.stdout).toMatch(new RegExp(`^${id} is cancelled\\.$`, "m"));
    expect(cancelled.stdout).toMatch(/^Download the errors: {2}hearth get file file-\S+-errors --out /m);
    const doc = json(await ok(["get", "batch", id, "--output", "json"]));
    expect(doc).toMatchObject({ status: "cancelled", request_counts: { total: 200 } });
    expect(doc.request_counts.completed).toBeLessThan(200);
    const errors = (await ok(["get", "file", doc.error_file_id])).stdout.trim().split("\n");
    expect(errors.length + doc.request_counts.completed).toBe(200);
    expect((await ok(["delete", "file", running.input_file_id])).stdout).toBe(`Deleted ${running.input_file_id}.\n`);
  }, 90_000);

  it("refuses bad options before sending anything, and says what to look at for an unknown batch", async () => {
    const endpoint = await run(["create", "batch", small, "--endpoint", "/v1/images"]);
    expect(endpoint.code).toBe(2);
    expect(endpoint.stderr).toContain(
      'Invalid --endpoint "/v1/images": use one of /v1/chat/completions, /v1/completions, /v1/embeddings.',
    );
    const window = await run(["create", "batch", small, "--endpoint", "/v1/completions", "--window", "30d"]);
    expect(window.code).toBe(2);
    expect(window.stderr).toContain('Invalid --window "30d"');
    const metadata = await run(["create", "batch", small, "--endpoint", "/v1/completions", "--metadata", "job"]);
    expect(metadata.code).toBe(2);
    expect(metadata.stderr).toContain('Invalid --metadata "job": give key=value.');
    const missing = await run(["create", "batch", "nowhere.jsonl", "--endpoint", "/v1/completions"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nowhere.jsonl is not a file.");
    const unknown = await run(["get", "batch", "batch_nope"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr.trim()).toBe(
      "error: There is no batch batch_nope. See the batches with `hearth list batches`.",
    );
    const noFile = await run(["get", "file", "file-nope"]);
    expect(noFile.code).toBe(4);
    expect(noFile.stdout).toBe("");
    expect(noFile.stderr.trim()).toBe("error: There is no file file-nope. See the files with `hearth list files`.");
  });

  it("creates a batch without waiting: its ID, or the batch object with --output json", async () => {
    const quiet = await ok(["create", "batch", small, "--endpoint", "/v1/completions", "--quiet"]);
    expect(quiet.stdout).toMatch(/^batch_\S+\n$/);
    const text = await ok(["create", "batch", small, "--endpoint", "/v1/completions"]);
    expect(text.stdout).toMatch(/^Created batch_\S+ \(validating\) from file-\S+\.\n/);
    const doc = json(await ok(["create", "batch", small, "--endpoint", "/v1/completions", "--output", "json"]));
    expect(doc).toMatchObject({ object: "batch", status: "validating", endpoint: "/v1/completions", metadata: null });
    expect(doc.input_file_id).toMatch(/^file-/);
  });
});
