/**
 * Addresses a caller-chosen URL must never reach: the IANA IPv4 and IPv6 special-purpose
 * address registries (plus multicast, site-local and known metadata addresses), held in
 * `net.BlockList`s. IPv6 formats that carry an IPv4 address (mapped, compatible, NAT64,
 * 6to4, Teredo) are decoded, so 127.0.0.1 cannot hide inside one.
 */
import { BlockList, isIP } from "node:net";

/** [address/prefix, why]; the first match names the reason, so narrower entries come first. */
type Rule = readonly [string, string];

const SPECIAL = "a special-purpose (IANA-reserved) address";
const DOCS = "a documentation (TEST-NET) address";

const V4_RULES: readonly Rule[] = [
  ["169.254.169.254/32", "a cloud metadata address"],
  ["0.0.0.0/8", "an unspecified address"],
  ["10.0.0.0/8", "a private address"],
  ["100.64.0.0/10", "a carrier-grade NAT (CGNAT) address"],
  ["127.0.0.0/8", "a loopback address"],
  ["169.254.0.0/16", "a link-local address"],
  ["172.16.0.0/12", "a private address"],
  ["192.0.0.0/24", "an IETF protocol address"],
  ["192.0.2.0/24", DOCS],
  ["192.31.196.0/24", SPECIAL],
  ["192.52.193.0/24", SPECIAL],
  ["192.88.99.0/24", "a 6to4 relay anycast address"],
  ["192.168.0.0/16", "a private address"],
  ["192.175.48.0/24", SPECIAL],
  ["198.18.0.0/15", "a benchmarking address"],
  ["198.51.100.0/24", DOCS],
  ["203.0.113.0/24", DOCS],
  ["224.0.0.0/4", "a multicast address"],
  ["240.0.0.0/4", "a reserved address"],
];

const V6_RULES: readonly Rule[] = [
  ["fd00:ec2::254/128", "a cloud metadata address"],
  ["::/128", "an unspecified address"],
  ["::1/128", "a loopback address"],
  ["64:ff9b:1::/48", "a local-use NAT64 address"],
  ["100::/64", "a discard-only address"],
  ["100:0:0:1::/64", SPECIAL],
  ["2001::/32", "a Teredo tunnel address"],
  ["2001::/23", "an IETF protocol address"],
  ["2001:db8::/32", DOCS],
  ["2002::/16", "a 6to4 tunnel address"],
  ["2620:4f:8000::/48", SPECIAL],
  ["3fff::/20", DOCS],
  ["5f00::/16", SPECIAL],
  ["fc00::/7", "a private (unique local) address"],
  ["fe80::/10", "a link-local address"],
  ["fec0::/10", "a site-local address"],
  ["ff00::/8", "a multicast address"],
];

type Table = { why: string; list: BlockList }[];

function compile(rules: readonly Rule[], family: "ipv4" | "ipv6"): Table {
  const byReason = new Map<string, BlockList>();
  for (const [cidr, why] of rules) {
    const [net, bits] = cidr.split("/") as [string, string];
    const list = byReason.get(why) ?? new BlockList();
    byReason.set(why, list);
    list.addSubnet(net, Number(bits), family);
  }
  return [...byReason].map(([why, list]) => ({ why, list }));
}

const V4_TABLE = compile(V4_RULES, "ipv4");
const V6_TABLE = compile(V6_RULES, "ipv6");

/** Bytes of an IPv4 (4) or IPv6 (16) literal (a zone id is ignored), or undefined. */
export function parseIp(s: string): number[] | undefined {
  const text = stripZone(s).toLowerCase();
  const v = isIP(text);
  if (v === 4) return text.split(".").map(Number);
  if (v !== 6) return undefined;
  // An embedded dotted quad (::ffff:1.2.3.4) becomes two hex groups.
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  let hex = text;
  if (tail.includes(".")) {
    const q = tail.split(".").map(Number);
    hex = `${text.slice(0, lastColon + 1)}${((q[0]! << 8) | q[1]!).toString(16)}:${((q[2]! << 8) | q[3]!).toString(16)}`;
  }
  const [head, rest] = hex.includes("::") ? (hex.split("::") as [string, string]) : [hex, undefined];
  const h = head ? head.split(":") : [];
  const r = rest ? rest.split(":") : [];
  const groups = rest === undefined ? h : [...h, ...Array<string>(8 - h.length - r.length).fill("0"), ...r];
  const bytes = groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  return bytes.length === 16 ? bytes : undefined;
}

function stripZone(s: string): string {
  const zone = s.indexOf("%");
  return zone >= 0 ? s.slice(0, zone) : s;
}

const dotted = (b: number[]) => b.join(".");
const startsWith = (ip: number[], prefix: number[]) => prefix.every((b, i) => ip[i] === b);

/**
 * The IPv4 addresses an IPv6 address carries, with the format's name when the address
 * is a tunnel (whose own prefix is refused anyway) rather than another spelling of IPv4.
 */
function carriedV4(ip: number[]): { v4: string[]; tunnel?: string } | undefined {
  const zeros10 = ip.slice(0, 10).every((b) => b === 0);
  if (zeros10 && ip[10] === 0xff && ip[11] === 0xff) return { v4: [dotted(ip.slice(12))] };
  // ::a.b.c.d, the deprecated "compatible" form; :: and ::1 are themselves, not IPv4.
  const tail = ip.slice(12);
  const isUnspecOrLoop = tail.slice(0, 3).every((b) => b === 0) && (tail[3] === 0 || tail[3] === 1);
  if (zeros10 && ip[10] === 0 && ip[11] === 0 && !isUnspecOrLoop) return { v4: [dotted(tail)] };
  if (startsWith(ip, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return { v4: [dotted(tail)] };
  if (startsWith(ip, [0x20, 0x02])) return { v4: [dotted(ip.slice(2, 6))], tunnel: "6to4" };
  // Teredo: the server at bits 32-63, the client inverted in the last 32 bits.
  if (startsWith(ip, [0x20, 0x01, 0, 0])) {
    return { v4: [dotted(tail.map((b) => b ^ 0xff)), dotted(ip.slice(4, 8))], tunnel: "Teredo" };
  }
  return undefined;
}

/** Why an address must not be called, or undefined when it is an ordinary public one. */
export function blockedReason(addr: string): string | undefined {
  const text = stripZone(addr);
  const family = isIP(text);
  if (family === 4) return V4_TABLE.find((r) => r.list.check(text, "ipv4"))?.why;
  const ip = family === 6 ? parseIp(text) : undefined;
  if (!ip) return "not an IP address";
  const carried = carriedV4(ip);
  for (const v4 of carried?.v4 ?? []) {
    const why = blockedReason(v4);
    if (why) return carried?.tunnel ? `${why} (${v4}) inside a ${carried.tunnel} address` : why;
  }
  return V6_TABLE.find((r) => r.list.check(text, "ipv6"))?.why;
}

/** A BlockList of allowlist entries that are IP literals or CIDR ranges (names are skipped). */
export function addressAllowList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [net, bits] = entry.split("/") as [string, string | undefined];
    const family = isIP(net);
    if (family === 0) continue;
    const type = family === 4 ? "ipv4" : "ipv6";
    const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
    if (Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128)) {
      list.addSubnet(net, prefix, type);
    }
  }
  return list;
}
