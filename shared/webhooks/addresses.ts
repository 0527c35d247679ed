import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

/**
 * Which addresses are public, and the resolver that finds a host's: what the webhooks' URL policy
 * (`url-policy.ts`) and the exports' SFTP delivery (`shared/exports/sftp-delivery.ts`) decide where
 * they may connect from. Kept apart so that a function checking an address loads only ipaddr.js.
 */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to (the system resolver, as Node's own connections use it). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/** `public`, or the name of the special range the address belongs to (`loopback`, `private`, …). */
export function addressRange(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return "invalid";
  }
  const range = parsed.range();
  if (range !== "unicast") return range;
  if (parsed.kind() === "ipv6" && !parsed.match(ipaddr.IPv6.parse("2000::"), 3)) return "reserved";
  return "public";
}
