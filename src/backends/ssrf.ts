/**
 * SSRF guard for caller-supplied provider URLs (`delegate_to_provider`). The orchestrating
 * model chooses the URL, so without this it could make dl POST a task (and a key) to the
 * user's LAN, loopback services or a cloud metadata endpoint.
 *
 * Rules: http(s) only, no userinfo (backends/url.ts); the host is resolved (every address)
 * and refused, before any connection, if any address is in a special-purpose range
 * (ip-ranges.ts: loopback, private, link-local, metadata, tunnels carrying such an
 * address, documentation ranges …) — unless the host, or the address, is in the allowlist.
 *
 * Residual risk: fetch resolves the name again, so a DNS-rebinding server could answer
 * differently the second time. Pinning the IP would break TLS SNI; the allowlist plus the
 * check here cover the common cases (typos, metadata, localhost services).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { DlError } from "../errors.ts";
import { checkHttpUrl } from "../url.ts";
import { addressAllowList, blockedReason } from "./ip-ranges.ts";

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
  const url = checkedUrl(raw);
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
  const allowed = addressAllowList(allow);
  for (const addr of addresses) {
    if (allowed.check(addr, isIP(addr) === 4 ? "ipv4" : "ipv6")) continue;
    const why = blockedReason(addr);
    if (why) throw refused(host, why, addr === host ? undefined : addr);
  }
  return url;
}

/** The URL when it passes the one http(s) check, else the refusal worded for the calling model. */
function checkedUrl(raw: string): URL {
  const c = checkHttpUrl(raw);
  if (c.ok) return c.url;
  switch (c.problem) {
    case "not a valid URL":
      throw new DlError("bad_input", "provider_url is not a valid URL; pass e.g. https://api.example.com/v1");
    case "not http(s)":
      throw new DlError("bad_input", `provider_url must use http or https, not ${c.url?.protocol.replace(":", "")}`);
    case "no host":
      throw new DlError("bad_input", "provider_url has no host");
    case "credentials in the URL":
      throw new DlError(
        "bad_input",
        `provider_url for ${c.url?.hostname} must not contain credentials; pass the key as api_key instead`,
      );
  }
}

function refused(host: string, why: string, addr?: string): DlError {
  return new DlError(
    "bad_input",
    `provider_url host ${host}${addr ? ` (resolves to ${addr})` : ""} is ${why}; dl refuses such targets. If this host is yours and intended, add it to DELEGATE_PROVIDER_ALLOW_HOSTS.`,
    { host },
  );
}
