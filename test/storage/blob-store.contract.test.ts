import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { buffer } from "node:stream/consumers";
import { afterAll, describe, expect, it } from "vitest";
import type { BlobStore } from "../../src/storage/blob-store.js";
import { pathToFileURL } from "node:url";
import { loadConfig } from "../../src/config.js";
import { FileBlobStore } from "../../src/storage/file-blob-store.js";
import { MemoryBlobStore } from "../../src/storage/memory-blob-store.js";
import { openBlobStore } from "../../src/storage/open-blob-store.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true }))));

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
      const store = openBlobStore(loadConfig({ HEARTH_STORAGE_URL: pathToFileURL(dir).href }).storage);
      expect(store).toBeInstanceOf(FileBlobStore);
      return store;
    },
  ],
  ["memory", async () => new MemoryBlobStore()],
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
