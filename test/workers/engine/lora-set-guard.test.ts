import { describe, expect, it } from "vitest";
import { LoraSetGuard } from "../../../src/workers/engine/lora-set-guard.js";

/** A piece of work that runs until `finish` is called, noting when it starts and ends. */
function work(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    run: async () => {
      log.push(`${name} starts`);
      await done;
      log.push(`${name} ends`);
      return name;
    },
    finish,
  };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("LoraSetGuard", () => {
  it("runs readers side by side, and a writer alone once they are done", async () => {
    const guard = new LoraSetGuard();
    const log: string[] = [];
    const [a, b, w] = [work(log, "read a"), work(log, "read b"), work(log, "write")];
    const running = [guard.reading(a.run), guard.reading(b.run), guard.writing(w.run)];
    await turn();
    expect(log).toEqual(["read a starts", "read b starts"]);
    a.finish();
    await turn();
    expect(log).not.toContain("write starts");
    b.finish();
    await turn();
    expect(log.at(-1)).toBe("write starts");
    w.finish();
    expect(await Promise.all(running)).toEqual(["read a", "read b", "write"]);
  });

  it("keeps arrival order: a reader that comes while a writer waits goes after it, and writers go one at a time", async () => {
    const guard = new LoraSetGuard();
    const log: string[] = [];
    const [first, w1, late, w2] = [
      work(log, "read 1"),
      work(log, "write 1"),
      work(log, "read 2"),
      work(log, "write 2"),
    ];
    const running = [guard.reading(first.run), guard.writing(w1.run), guard.reading(late.run), guard.writing(w2.run)];
    await turn();
    expect(log).toEqual(["read 1 starts"]);
    first.finish();
    await turn();
    expect(log.slice(-1)).toEqual(["write 1 starts"]);
    w1.finish();
    await turn();
    expect(log.slice(-2)).toEqual(["write 1 ends", "read 2 starts"]);
    late.finish();
    await turn();
    expect(log.slice(-2)).toEqual(["read 2 ends", "write 2 starts"]);
    w2.finish();
    await Promise.all(running);
  });

  it("lets go after work that fails", async () => {
    const guard = new LoraSetGuard();
    await expect(guard.writing(() => Promise.reject(new Error("no such file")))).rejects.toThrow("no such file");
    await expect(guard.reading(() => Promise.reject(new Error("out of memory")))).rejects.toThrow("out of memory");
    expect(await guard.writing(async () => "free")).toBe("free");
  });
});
