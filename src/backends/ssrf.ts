/**
 * SSRF guard for caller-supplied provider URLs (`delegate_to_provider`). The orchestrating
 * model chooses the URL, so without this it could make dl POST a task (and a key) to the
 * user's LAN, loopback services or a cloud metadata endpoint.
 *
 * Rules: http(s) only, no userinfo; the host is resolved (every address) and refused if
 * any address is loopback, private, link-local, CGNAT, unspecified, multicast, reserved
 * or a metadata address — unless the host, or the address, is in the allowlist.
 *
 * Residual risk: fetch resolves the name again, so a DNS-rebinding server could answer
 * differently the second time. Pinning the IP would break TLS SNI; the allowlist plus the
 * check here cover the common cases (typos, metadata, localhost services).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { DlError } from "../errors.ts";

type LookupFn = (host: string) => Promise<{ address: string; family: number }[]>;

export type SsrfOptions = {
  /** Hostnames (exact, case-insensitive), IP literals or CIDR ranges that may be private. */
  allowHosts?: readonly string[];
  /** Injectable resolver (tests); defaults to dns.lookup with all addresses. */
  lookup?: LookupFn;
};

const METADATA_HOSTS = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
]);

const defaultLookup: LookupFn = (host) => dnsLookup(host, { all: true, verbatim: true });

/** Returns the parsed URL when it is safe to call, else throws DlError("bad_input"). */
export async function guardProviderUrl(raw: string, opts: SsrfOptions = {}): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new DlError("bad_input", "provider_url is not a valid URL; pass e.g. https://api.example.com/v1");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new DlError("bad_input", `provider_url must use http or https, not ${url.protocol.replace(":", "")}`);
  }
  if (url.username || url.password) {
    throw new DlError(
      "bad_input",
      `provider_url for ${url.hostname} must not contain credentials; pass the key as api_key instead`,
    );
  }
  const host = url.hostname
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.$/, "");
  if (!host) throw new DlError("bad_input", "provider_url has no host");
  const allow = (opts.allowHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean);
  if (allow.includes(host)) return url;

  if (METADATA_HOSTS.has(host)) throw refused(host, "a cloud metadata service");
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await (opts.lookup ?? defaultLookup)(host)).map((a) => a.address);
    } catch {
      throw new DlError("bad_input", `provider_url host ${host} could not be resolved; check the spelling`);
    }
    if (addresses.length === 0) throw new DlError("bad_input", `provider_url host ${host} resolved to no address`);
  }
  for (const addr of addresses) {
    if (allowedByList(addr, allow)) continue;
    const why = blockedReason(addr);
    if (why) throw refused(host, why, addr === host ? undefined : addr);
  }
  return url;
}

function refused(host: string, why: string, addr?: string): DlError {
  return new DlError(
    "bad_input",
    `provider_url host ${host}${addr ? ` (resolves to ${addr})` : ""} is ${why}; dl refuses such targets. If this host is yours and intended, add it to DELEGATE_PROVIDER_ALLOW_HOSTS.`,
    { host },
  );
}

function allowedByList(addr: string, allow: readonly string[]): boolean {
  const ip = parseIp(addr);
  for (const entry of allow) {
    if (entry === addr) return true;
    const slash = entry.indexOf("/");
    if (slash < 0 || !ip) continue;
    const base = parseIp(entry.slice(0, slash));
    const bits = Number(entry.slice(slash + 1));
    if (base && base.length === ip.length && Number.isInteger(bits) && inPrefix(ip, base, bits)) return true;
  }
  return false;
}

/** Bytes of an IPv4 (4) or IPv6 (16) literal, or undefined. */
export function parseIp(s: string): number[] | undefined {
  const v = isIP(s);
  if (v === 4) return s.split(".").map(Number);
  if (v !== 6) return undefined;
  let text = s.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  // An embedded dotted quad (::ffff:1.2.3.4) becomes two hex groups.
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const q = tail.split(".").map(Number);
    text = `${text.slice(0, lastColon + 1)}${((q[0]! << 8) | q[1]!).toString(16)}:${((q[2]! << 8) | q[3]!).toString(16)}`;
  }
  const [head, rest] = text.includes("::") ? (text.split("::") as [string, string]) : [text, undefined];
  const h = head ? head.split(":") : [];
  const r = rest !== undefined && rest !== "" ? rest.split(":") : [];
  const groups = rest === undefined ? h : [...h, ...Array<string>(8 - h.length - r.length).fill("0"), ...r];
  const bytes: number[] = [];
  for (const g of groups) {
    const n = parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  return bytes.length === 16 ? bytes : undefined;
}

function inPrefix(ip: number[], base: number[], bits: number): boolean {
  for (let i = 0; i < ip.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i]! & mask) !== (base[i]! & mask)) return false;
  }
  return true;
}

type Range = [string, number, string];
const V4_BLOCKED: Range[] = [
  ["169.254.169.254", 32, "a cloud metadata address"],
  ["0.0.0.0", 8, "an unspecified address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a carrier-grade NAT (CGNAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "an IETF protocol address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
];
const V6_BLOCKED: Range[] = [
  ["fd00:ec2::254", 128, "a cloud metadata address"],
  ["::", 128, "an unspecified address"],
  ["::1", 128, "a loopback address"],
  ["fc00::", 7, "a private (unique local) address"],
  ["fe80::", 10, "a link-local address"],
  ["ff00::", 8, "a multicast address"],
];
const V4_TABLE = V4_BLOCKED.map(([a, b, why]) => ({ ip: parseIp(a)!, bits: b, why }));
const V6_TABLE = V6_BLOCKED.map(([a, b, why]) => ({ ip: parseIp(a)!, bits: b, why }));

/** Why an address must not be called, or undefined when it is public. */
export function blockedReason(addr: string): string | undefined {
  const ip = parseIp(addr);
  if (!ip) return "not an IP address";
  if (ip.length === 4) return V4_TABLE.find((r) => inPrefix(ip, r.ip, r.bits))?.why;
  const embedded = embeddedV4(ip);
  if (embedded) return blockedReason(embedded.join("."));
  return V6_TABLE.find((r) => inPrefix(ip, r.ip, r.bits))?.why;
}

/** IPv4 carried inside IPv6: mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96. */
function embeddedV4(ip: number[]): number[] | undefined {
  const zeros10 = ip.slice(0, 10).every((b) => b === 0);
  if (zeros10 && ip[10] === 0xff && ip[11] === 0xff) return ip.slice(12);
  // ::a.b.c.d (deprecated "compatible" form), but not :: and ::1 themselves.
  const tail = ip.slice(12);
  const isUnspecOrLoop = tail.slice(0, 3).every((b) => b === 0) && (tail[3] === 0 || tail[3] === 1);
  if (zeros10 && ip[10] === 0 && ip[11] === 0 && !isUnspecOrLoop) return tail;
  const nat64 = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];
  if (nat64.every((b, i) => ip[i] === b)) return ip.slice(12);
  return undefined;
}
