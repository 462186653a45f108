import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { buffer } from "node:stream/consumers";
import { afterAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.js";
import type { BlobStore } from "../../src/storage/blob-store.js";
import { pathToFileURL } from "node:url";
import { loadConfig } from "../../src/config.js";
import { FileBlobStore } from "../../src/storage/file-blob-store.js";
import { MemoryBlobStore } from "../helpers/memory-blob-store.js";
import { openBlobStore } from "../../src/storage/open-blob-store.js";
import { S3BlobStore } from "../../src/storage/s3-blob-store.js";
import { S3_CREDENTIALS, startS3Server, type S3Server } from "../helpers/s3-server.js";

const dirs: string[] = [];
let s3: S3Server | undefined;
let buckets = 0;
afterAll(async () => {
  await s3?.close();
  await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true })));
});

/** A store on a fresh bucket of a real S3-protocol server (s3rver), opened from the environment as Hearth does. */
async function s3Store(prefix = ""): Promise<BlobStore> {
  s3 ??= await startS3Server();
  const bucket = `hearth-test-${++buckets}`;
  await s3.createBucket(bucket);
  const env = s3.env(bucket, prefix);
  // The AWS SDK reads the credentials from the process's environment, as in production.
  Object.assign(process.env, S3_CREDENTIALS);
  const store = openBlobStore(loadConfig(env));
  expect(store).toBeInstanceOf(S3BlobStore);
  return store;
}

const backends: [string, () => Promise<BlobStore>][] = [
  [
    "file",
    async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-blobs-"));
      dirs.push(dir);
      return new FileBlobStore(dir);
    },
  ],
  [
    "file, opened from HEARTH_STORAGE_URL",
    async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-blobs-url-"));
      dirs.push(dir);
      const store = openBlobStore(loadConfig({ HEARTH_STORAGE_URL: pathToFileURL(dir).href }));
      expect(store).toBeInstanceOf(FileBlobStore);
      return store;
    },
  ],
  ["memory", async () => new MemoryBlobStore()],
  ["s3 (s3rver)", () => s3Store()],
  ["s3 (s3rver), under a key prefix", () => s3Store("tenant/hearth")],
];

async function* chunks(...parts: string[]) {
  for (const p of parts) yield Buffer.from(p);
}

// One contract, every backend.
describe.each(backends)("BlobStore contract (%s)", (_name, make) => {
  it("stores streamed content with its size and SHA-256", async () => {
    const store = await make();
    const info = await store.put("a/b/file.bin", chunks("hello ", "world"));
    expect(info).toEqual({
      key: "a/b/file.bin",
      size: 11,
      sha256: createHash("sha256").update("hello world").digest("hex"),
    });
    expect((await buffer(await store.get("a/b/file.bin"))).toString()).toBe("hello world");
    expect(await store.stat("a/b/file.bin")).toMatchObject({ size: 11 });
    expect(await store.list("a/")).toEqual(["a/b/file.bin"]);
  });

  it("keeps the old content when a replacement fails, and leaves no partial file", async () => {
    const store = await make();
    await store.put("k", chunks("original"));
    await expect(store.put("k", chunks("x".repeat(20)), { maxBytes: 10 })).rejects.toMatchObject({
      code: "payload_too_large",
    });
    await expect(store.put("k", chunks("other"), { expectedSha256: "0".repeat(64) })).rejects.toMatchObject({
      code: "invalid_request",
    });
    expect((await buffer(await store.get("k"))).toString()).toBe("original");
    expect(await store.list("")).toEqual(["k"]);
  });

  it("stores the content only through its commit guard, once the whole body is in", async () => {
    const store = await make();
    await store.put("g", chunks("old"));
    const seen: { size: number; before: string }[] = [];
    const info = await store.put("g", chunks("new ", "content"), {
      guardCommit: async (size, commit) => {
        seen.push({ size, before: (await buffer(await store.get("g"))).toString() });
        await commit();
      },
    });
    expect(info.size).toBe(11);
    expect(seen).toEqual([{ size: 11, before: "old" }]);
    expect((await buffer(await store.get("g"))).toString()).toBe("new content");
    // A guard that refuses leaves the old content, and no partial file.
    const refusal = new AppError("payload_too_large", "no room");
    await expect(
      store.put("g", chunks("refused"), {
        guardCommit: async () => {
          throw refusal;
        },
      }),
    ).rejects.toBe(refusal);
    expect((await buffer(await store.get("g"))).toString()).toBe("new content");
    expect(await store.list("")).toEqual(["g"]);
  });

  it("refuses keys that could escape the store", async () => {
    const store = await make();
    for (const bad of ["../x", "/etc/passwd", "a//b", "a/./b", "", "a\\b", "sp ace"]) {
      await expect(store.put(bad, chunks("x"))).rejects.toMatchObject({ code: "invalid_request" });
    }
  });

  it("deletes a key or a whole prefix; missing keys are fine", async () => {
    const store = await make();
    await store.put("m/1", chunks("1"));
    await store.put("m/2", chunks("2"));
    await store.put("n/1", chunks("3"));
    await store.delete("m/");
    await store.delete("missing");
    expect(await store.list("")).toEqual(["n/1"]);
    await expect(store.get("m/1")).rejects.toMatchObject({ code: "not_found" });
    expect(await store.stat("m/1")).toBeUndefined();
  });
});

describe("S3BlobStore", () => {
  it("streams a large upload in bounded memory, and reads it back whole", async () => {
    const store = await s3Store("big");
    const total = 320 * 1024 * 1024;
    const piece = Buffer.alloc(1024 * 1024, 7);
    async function* body(bytes = total) {
      for (let sent = 0; sent < bytes; sent += piece.length) yield piece;
    }
    // A first upload takes what the allocator keeps anyway (measured: +77 MiB for 64 MiB, then
    // +99 for 192, +44 for 384: flat, not growing with the size).
    await store.put("warm-up", body(64 * 1024 * 1024));
    await store.delete("warm-up");
    const hash = createHash("sha256");
    for (let sent = 0; sent < total; sent += piece.length) hash.update(piece);
    const sha256 = hash.digest("hex");
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    try {
      expect(await store.put("artifacts/big.bin", body())).toEqual({ key: "artifacts/big.bin", size: total, sha256 });
    } finally {
      clearInterval(sampler);
    }
    // Two 8 MiB parts in flight and the streams' buffers: far less than the 320 MiB sent.
    expect((peak - before) / 2 ** 20).toBeLessThan(128);
    expect(await store.stat("artifacts/big.bin")).toEqual({ key: "artifacts/big.bin", size: total, sha256 });
    const read = createHash("sha256");
    let size = 0;
    for await (const chunk of await store.get("artifacts/big.bin")) {
      read.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    expect(size).toBe(total);
    expect(read.digest("hex")).toBe(sha256);
    expect(await store.list("")).toEqual(["artifacts/big.bin"]);
  }, 120_000);

  it("answers 503 when the object store is unreachable", async () => {
    const store = openBlobStore(
      loadConfig({
        HEARTH_STORAGE_URL: "s3://hearth-nowhere/x",
        AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9",
        ...S3_CREDENTIALS,
      }),
    );
    // The client learns only that storage is unavailable; the endpoint and the SDK's reason go to the log.
    const failure = { code: "unavailable", message: "The file storage is unavailable; please retry." };
    await expect(store.put("k", chunks("x"))).rejects.toMatchObject(failure);
    await expect(store.get("k")).rejects.toMatchObject({
      ...failure,
      detail: expect.stringMatching(/^S3 request for k failed/),
    });
  });

  it("refuses S3 URLs it cannot use, with a reason", () => {
    expect(() => loadConfig({ HEARTH_STORAGE_URL: "s3://Bad_Bucket/x" })).toThrow(/bucket/);
    expect(() => loadConfig({ HEARTH_STORAGE_URL: "s3://user:pw@bucket/x" })).toThrow(/credentials come from/);
    expect(() => loadConfig({ HEARTH_STORAGE_URL: "s3://bucket/a%20b" })).toThrow(/plain path segments/);
    expect(loadConfig({ HEARTH_STORAGE_URL: "s3://my-bucket/a/b/" }).storage).toEqual({
      scheme: "s3",
      bucket: "my-bucket",
      prefix: "a/b",
    });
  });
});
