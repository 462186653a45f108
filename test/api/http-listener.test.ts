import net from "node:net";
import { describe, expect, it } from "vitest";
import { listenHttp } from "../../src/api/http-listener.js";

const answer = () => new Response("ok");
const config = { host: "127.0.0.1", bodyTimeoutMs: 30_000 };

describe("the API's HTTP listener", () => {
  it("listens on a free port for PORT 0, and names it", async () => {
    const { server, port, url } = await listenHttp(answer, { ...config, port: 0 });
    try {
      expect(port).toBeGreaterThan(0);
      expect(url).toBe(`http://127.0.0.1:${port}`);
      expect(await (await fetch(url)).text()).toBe("ok");
    } finally {
      server.close();
    }
  });

  it("says what to set where it cannot listen: a taken port, an address not this machine's", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const taken = (holder.address() as net.AddressInfo).port;
    try {
      await expect(listenHttp(answer, { ...config, port: taken })).rejects.toThrow(
        `Cannot listen on 127.0.0.1:${taken}: another process already listens there. Stop it, or set PORT to a free port.`,
      );
    } finally {
      holder.close();
    }
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is no address of this machine.
    await expect(listenHttp(answer, { ...config, host: "192.0.2.1", port: 0 })).rejects.toThrow(
      "Cannot listen on 192.0.2.1:0: 192.0.2.1 is not an address of this machine. Set HOST to one that is (0.0.0.0 for all).",
    );
  });
});
