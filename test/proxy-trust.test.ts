import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { parseProxyTrust, TrustedProxies } from "../src/proxy-trust.js";

const proxies = (text: string) => {
  const trust = parseProxyTrust(text);
  if ("problem" in trust) throw new Error(trust.problem);
  return new TrustedProxies(trust);
};

// HEARTH_TRUST_PROXY's forms, and which address each makes the client's. The API's use of it
// (the limits, X-Forwarded-Proto) is test/api/failed-authentications.test.ts.
describe("trusted proxies (HEARTH_TRUST_PROXY)", () => {
  it("believes no header by default: the connection's address is the client's", () => {
    const none = new TrustedProxies(loadConfig({}).web.trustProxy);
    expect(none.clientAddress("10.0.0.1", "1.2.3.4")).toBe("10.0.0.1");
    expect(none.trusts("127.0.0.1", 0)).toBe(false);
    expect(proxies("false").clientAddress("::ffff:10.0.0.1", "1.2.3.4")).toBe("10.0.0.1");
  });

  it("reads X-Forwarded-For from the right: what the client wrote on the left is never the address", () => {
    // true is one hop, as before: the immediate peer appended the client's address.
    const one = proxies("true");
    expect(one.clientAddress("127.0.0.1", "6.6.6.6, 203.0.113.7")).toBe("203.0.113.7");
    expect(one.clientAddress("127.0.0.1", "203.0.113.7")).toBe("203.0.113.7");
    expect(one.clientAddress("127.0.0.1", undefined)).toBe("127.0.0.1");
    expect(one.trusts("198.51.100.1", 0)).toBe(true);
    expect(one.trusts("198.51.100.1", 1)).toBe(false);
  });

  it("counts hops: each of the nearest n proxies is believed about the next", () => {
    const two = proxies("2");
    expect(two.clientAddress("127.0.0.1", "6.6.6.6, 203.0.113.7, 10.0.0.9")).toBe("203.0.113.7");
    // Fewer entries than hops: the leftmost, as far as the header goes.
    expect(two.clientAddress("127.0.0.1", "203.0.113.7")).toBe("203.0.113.7");
  });

  it("trusts addresses, CIDRs and named ranges: the client is the rightmost address not among them", () => {
    const list = proxies("loopback, 10.0.0.0/8, 2001:db8::/32, 198.51.100.4");
    expect(list.clientAddress("127.0.0.1", "6.6.6.6, 203.0.113.7, 10.9.8.7, 198.51.100.4")).toBe("203.0.113.7");
    expect(list.clientAddress("::1", "6.6.6.6, 2001:db8::5")).toBe("6.6.6.6");
    expect(list.clientAddress("::ffff:127.0.0.1", "6.6.6.6, 203.0.113.7")).toBe("203.0.113.7");
    // A peer that is not a trusted proxy says nothing believable: its headers are ignored.
    expect(list.clientAddress("203.0.113.9", "6.6.6.6, 10.0.0.1")).toBe("203.0.113.9");
    expect(list.trusts("203.0.113.9", 0)).toBe(false);
    expect(proxies("uniquelocal").clientAddress("192.168.1.2", "172.16.0.1, 203.0.113.7")).toBe("203.0.113.7");
    expect(proxies("linklocal").trusts("fe80::1", 0)).toBe(true);
  });

  it("stops the process on a value that is none of these", () => {
    for (const bad of ["yes please", "10.0.0.0/33", "loopback,nowhere", "999"]) {
      expect(() => loadConfig({ HEARTH_TRUST_PROXY: bad }), bad).toThrow(ConfigError);
    }
    expect(loadConfig({ HEARTH_TRUST_PROXY: "3" }).web.trustProxy).toEqual({ hops: 3 });
  });
});
