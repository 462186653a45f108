import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { BlobStore } from "../../src/storage/blob-store.js";
import { openBlobStore } from "../../src/storage/open-blob-store.js";
import { ArtifactCache } from "../../src/workers/artifact-cache.js";
import { S3_CREDENTIALS, startS3Server, type S3Server } from "../helpers/s3-server.js";

async function* bytes(text: string) {
  yield Buffer.from(text);
}
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const artifact = (text: string) => `artifacts/lora/${sha(text)}.gguf`;

// A worker's local copies of artifacts kept on S3 (a real S3-protocol server).
describe("ArtifactCache over S3", () => {
  let s3: S3Server;
  let store: BlobStore;
  let dir: string;

  beforeAll(async () => {
    s3 = await startS3Server();
    await s3.createBucket("artifacts");
    Object.assign(process.env, S3_CREDENTIALS);
    store = openBlobStore(loadConfig(s3.env("artifacts", "hearth")));
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-artifact-cache-"));
  });
  afterAll(async () => {
    await s3?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("downloads an artifact once, however many ask at once, and checks it against the stored SHA-256", async () => {
    const key = artifact("weights one");
    await store.put(key, bytes("weights one"));
    const cache = new ArtifactCache(store, path.join(dir, "once"), 1024);
    let gets = 0;
    const get = store.get.bind(store);
    store.get = (k) => {
      gets++;
      return get(k);
    };
    try {
      const files = await Promise.all([cache.file(key), cache.file(key), cache.file(key)]);
      expect(new Set(files).size).toBe(1);
      expect(await fs.readFile(files[0]!, "utf8")).toBe("weights one");
      expect(await cache.file(key)).toBe(files[0]);
      expect(gets).toBe(1);
    } finally {
      store.get = get;
    }
  });

  it("keeps at most its bound, the least recently used going first, and finds its copies after a restart", async () => {
    const root = path.join(dir, "lru");
    const cache = new ArtifactCache(store, root, 25);
    const [a, b, c] = ["a".repeat(10), "b".repeat(10), "c".repeat(10)];
    for (const text of [a, b, c]) await store.put(artifact(text), bytes(text));
    const fileA = await cache.file(artifact(a));
    const fileB = await cache.file(artifact(b));
    await cache.file(artifact(a)); // a is now more recent than b
    await cache.file(artifact(c)); // 30 bytes > 25: b goes
    expect(cache.bytes).toBe(20);
    await expect(fs.stat(fileB)).rejects.toThrow();
    expect(await fs.readFile(fileA, "utf8")).toBe(a);
    const again = new ArtifactCache(store, root, 25);
    expect(await again.file(artifact(a))).toBe(fileA);
    expect(again.bytes).toBe(20);
  });

  it("refuses a download whose bytes differ from what the store recorded, and keeps nothing of it", async () => {
    const key = artifact("the real bytes");
    await store.put(key, bytes("the real bytes"));
    const lying: BlobStore = Object.create(store);
    lying.get = async () => (await import("node:stream")).Readable.from([Buffer.from("other bytes")]);
    const root = path.join(dir, "corrupt");
    const cache = new ArtifactCache(lying, root, 1024);
    await expect(cache.file(key)).rejects.toMatchObject({ code: "internal", message: /SHA-256/ });
    expect(await fs.readdir(root, { recursive: true }).then((f) => f.filter((n) => n.endsWith(".gguf")))).toEqual([]);
    expect(cache.bytes).toBe(0);
  });

  it("says so when the artifact is gone from storage", async () => {
    const cache = new ArtifactCache(store, path.join(dir, "gone"), 1024);
    await expect(cache.file(artifact("never stored"))).rejects.toMatchObject({ code: "internal", message: /missing/ });
  });
});
