import net from "node:net";

/**
 * Which proxies in front of Hearth are believed about the client (HEARTH_TRUST_PROXY): none
 * (`hops: 0`), the nearest `hops` of them whatever their addresses, or those whose addresses
 * fall in `ranges` (CIDRs). Only what a trusted proxy says counts: X-Forwarded-For is read
 * from its right end (what the nearest proxy appended) back to the first address that is not
 * a trusted proxy, which is the client; the entries left of it are whatever the client sent.
 */
export type ProxyTrust = { readonly hops: number } | { readonly ranges: readonly string[] };

/** The named ranges HEARTH_TRUST_PROXY accepts, as express's proxy-addr names them. */
export const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

/**
 * HEARTH_TRUST_PROXY's text: `false`, `true` (one hop: the immediate peer, as before ranges
 * existed), a number of hops, or a comma list of addresses, CIDRs and named ranges.
 */
export function parseProxyTrust(text: string): ProxyTrust | { problem: string } {
  const value = text.trim().toLowerCase();
  if (value === "" || value === "false") return { hops: 0 };
  if (value === "true") return { hops: 1 };
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return hops <= 100 ? { hops } : { problem: "at most 100 hops" };
  }
  const ranges: string[] = [];
  for (const entry of value.split(",").map((e) => e.trim())) {
    const named = NAMED_RANGES[entry];
    if (named) ranges.push(...named);
    else if (cidr(entry)) ranges.push(entry.includes("/") ? entry : `${entry}/${net.isIPv4(entry) ? 32 : 128}`);
    else
      return {
        problem: `"${entry}" is not an address, a CIDR or one of ${Object.keys(NAMED_RANGES).join(", ")}; the value is false, true, a number of hops, or a comma list of those`,
      };
  }
  return { ranges };
}

function cidr(entry: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } | undefined {
  const [address = "", bits, ...rest] = entry.split("/");
  const version = net.isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const max = version === 4 ? 32 : 128;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return undefined;
  const prefix = bits === undefined ? max : Number(bits);
  return prefix <= max ? { address, prefix, family: version === 4 ? "ipv4" : "ipv6" } : undefined;
}

/** An IPv4 address as a dual-stack socket reports it (`::ffff:10.0.0.1`) is that IPv4 address. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/** A ProxyTrust ready to answer, built once per process. */
export class TrustedProxies {
  private readonly hops: number;
  private readonly list: net.BlockList | undefined;

  constructor(trust: ProxyTrust) {
    if ("hops" in trust) {
      this.hops = trust.hops;
      return;
    }
    this.hops = 0;
    this.list = new net.BlockList();
    for (const range of trust.ranges) {
      const parsed = cidr(range);
      if (parsed) this.list.addSubnet(parsed.address, parsed.prefix, parsed.family);
    }
  }

  /** Whether `address`, `hop` steps from Hearth (0: the connection's peer), is a proxy to believe. */
  trusts(address: string, hop: number): boolean {
    if (!this.list) return hop < this.hops;
    const version = net.isIP(address);
    return version !== 0 && this.list.check(address, version === 4 ? "ipv4" : "ipv6");
  }

  /**
   * The client: the connection's peer, or, while each address so far is a trusted proxy, the
   * address it says it forwarded for (the rightmost X-Forwarded-For entry not yet read).
   * Behind more trusted hops than the header names, its leftmost entry.
   */
  clientAddress(peer: string, forwardedFor: string | undefined): string {
    let address = plain(peer);
    const chain = (forwardedFor ?? "")
      .split(",")
      .map((e) => e.trim())
      .filter(Boolean);
    for (let hop = 0; chain.length > 0 && this.trusts(address, hop); hop++) address = plain(chain.pop()!);
    return address;
  }
}
