import net from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "../../bench/src/free-port.js";

const listen = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });

describe("freePort", () => {
  it("hands out ports below the ephemeral range, in this test worker's block, each once, passing over a taken one", async () => {
    const block = Number(process.env.VITEST_POOL_ID) % 25;
    const first = 20_000 + block * 500;
    const inBlock = (port: number) => first + ((((port - first) % 500) + 500) % 500);
    const a = await freePort();
    expect(a).toBeGreaterThanOrEqual(first);
    expect(a).toBeLessThan(first + 500);
    // The next port of the block is taken: it is passed over.
    const taken = await listen(inBlock(a + 1));
    try {
      const b = await freePort();
      expect(b).toBe(inBlock(a + 2));
      // Handed out, not held: the caller's child binds it.
      (await listen(b)).close();
    } finally {
      taken.close();
    }
    const seen = new Set([a]);
    for (let i = 0; i < 20; i++) seen.add(await freePort());
    expect(seen.size).toBe(21);
  });
});
