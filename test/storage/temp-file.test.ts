import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { writeThroughTempFile } from "../../src/storage/temp-file.js";

const dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-temp-file-"));
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

const failing = () =>
  new Transform({
    transform(_chunk, _encoding, done) {
      done(new Error("too large"));
    },
  });

describe("writeThroughTempFile", () => {
  it("leaves no partial file once it rejects, however early the stream fails", async () => {
    // The stream fails on its first chunk, while the file is still being opened; many at once
    // keep the file system's threads busy, which is when a late open used to outlive the removal.
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        writeThroughTempFile(path.join(dir, `f${i}`), Readable.from([Buffer.alloc(800)]), failing(), async () => {}),
      ),
    );
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it("gives the finished file to commit, and removes it when commit refuses", async () => {
    const kept = path.join(dir, "kept");
    const pass = () => new Transform({ transform: (chunk, _e, done) => done(null, chunk) });
    await writeThroughTempFile(kept, Readable.from([Buffer.from("hello")]), pass(), (temp) => fs.rename(temp, kept));
    expect(await fs.readFile(kept, "utf8")).toBe("hello");
    await expect(
      writeThroughTempFile(path.join(dir, "refused"), Readable.from([Buffer.from("x")]), pass(), async () => {
        throw new Error("over quota");
      }),
    ).rejects.toThrow("over quota");
    expect(await fs.readdir(dir)).toEqual(["kept"]);
  });
});
