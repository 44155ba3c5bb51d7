import { describe, expect, test } from "bun:test";
import { blockedReason, parseIp } from "../../src/backends/ip-ranges.ts";
import { guardProviderUrl } from "../../src/backends/ssrf.ts";
import { DlError } from "../../src/errors.ts";

async function refusal(
  url: string,
  allowHosts: string[] = [],
  lookup?: (h: string) => Promise<{ address: string; family: number }[]>,
): Promise<DlError> {
  const e = await guardProviderUrl(url, { allowHosts, ...(lookup ? { lookup } : {}) }).then(
    () => new Error(`expected ${url} to be refused`),
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(DlError);
  expect((e as DlError).code).toBe("bad_input");
  return e as DlError;
}

describe("refused addresses (literal IPs)", () => {
  const cases: [string, RegExp][] = [
    ["http://127.0.0.1:4000/v1", /loopback/],
    ["http://127.8.9.10/", /loopback/],
    ["http://[::1]/", /loopback/],
    ["http://10.1.2.3/", /private/],
    ["http://172.16.0.1/", /private/],
    ["http://172.31.255.255/", /private/],
    ["http://192.168.1.1/", /private/],
    ["http://[fc00::1]/", /private/],
    ["http://[fd12:3456::1]/", /private/],
    ["http://169.254.10.10/", /link-local/],
    ["http://[fe80::1]/", /link-local/],
    ["http://100.64.0.1/", /CGNAT/],
    ["http://100.127.255.255/", /CGNAT/],
    ["http://0.0.0.0/", /unspecified/],
    ["http://[::]/", /unspecified/],
    ["http://224.0.0.1/", /multicast/],
    ["http://[ff02::1]/", /multicast/],
    ["http://169.254.169.254/latest/meta-data/", /metadata/],
    ["http://[fd00:ec2::254]/", /metadata/],
    ["http://metadata.google.internal/computeMetadata/v1/", /metadata/],
    ["http://[::ffff:127.0.0.1]/", /loopback/],
    ["http://[::ffff:a9fe:a9fe]/", /metadata/],
    ["http://[::ffff:10.0.0.1]/", /private/],
    ["http://[64:ff9b::a00:1]/", /private/],
    // WHATWG URL parsing turns these spellings into 127.0.0.1 before we look.
    ["http://2130706433/", /loopback/],
    ["http://0x7f.1/", /loopback/],
  ];
  for (const [url, why] of cases) {
    test(url, async () => {
      const e = await refusal(url);
      expect(e.message).toMatch(why);
      expect(e.message).toContain("DELEGATE_PROVIDER_ALLOW_HOSTS");
    });
  }
});

describe("allowed", () => {
  test("public literal addresses pass and the URL comes back parsed", async () => {
    const u = await guardProviderUrl("https://8.8.8.8/v1/chat/completions");
    expect(u.href).toBe("https://8.8.8.8/v1/chat/completions");
    expect((await guardProviderUrl("http://[2606:4700:4700::1111]/")).hostname).toBe("[2606:4700:4700::1111]");
    expect((await guardProviderUrl("http://172.32.0.1/")).hostname).toBe("172.32.0.1");
    expect((await guardProviderUrl("http://100.128.0.1/")).hostname).toBe("100.128.0.1");
  });

  test("a hostname is checked on every address it resolves to", async () => {
    const lookup = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "10.0.0.5", family: 4 },
    ];
    const e = await refusal("https://mixed.example/v1", [], lookup);
    expect(e.message).toContain("mixed.example (resolves to 10.0.0.5)");
    const ok = await guardProviderUrl("https://pub.example/v1", {
      lookup: async () => [{ address: "93.184.216.34", family: 4 }],
    });
    expect(ok.hostname).toBe("pub.example");
  });

  test("localhost is refused unless allowlisted by name", async () => {
    const e = await refusal("http://localhost:4000/v1");
    expect(e.message).toMatch(/localhost.*loopback/);
    expect((await guardProviderUrl("http://localhost:4000/v1", { allowHosts: ["LOCALHOST"] })).port).toBe("4000");
  });

  test("allowlist by address and by CIDR", async () => {
    expect((await guardProviderUrl("http://10.1.2.3/", { allowHosts: ["10.1.2.3"] })).hostname).toBe("10.1.2.3");
    const lookup = async () => [{ address: "100.123.88.91", family: 4 }];
    expect((await guardProviderUrl("http://tailnet-box/", { allowHosts: ["100.64.0.0/10"], lookup })).hostname).toBe(
      "tailnet-box",
    );
    await refusal("http://10.9.9.9/", ["10.1.0.0/16"]);
    expect((await guardProviderUrl("http://[fd00::5]/", { allowHosts: ["fd00::/8"] })).hostname).toBe("[fd00::5]");
  });
});

describe("URL shape", () => {
  test("only http(s)", async () => {
    expect((await refusal("file:///etc/passwd")).message).toMatch(/http or https/);
    expect((await refusal("gopher://8.8.8.8/")).message).toMatch(/http or https/);
    expect((await refusal("not a url")).message).toMatch(/not a valid URL/);
  });

  test("credentials in the URL are refused and never echoed", async () => {
    const e = await refusal("https://user:sk-live-SECRETKEY@api.example.com/v1");
    expect(e.message).toContain("api.example.com");
    expect(e.message).not.toContain("SECRETKEY");
    expect(e.message).not.toContain("user");
  });

  test("an unresolvable host is refused with its name", async () => {
    const e = await refusal("https://nope.invalid/", [], async () => {
      throw new Error("ENOTFOUND");
    });
    expect(e.message).toContain("nope.invalid could not be resolved");
  });
});

test("parseIp and blockedReason", () => {
  expect(parseIp("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
  expect(parseIp("1::")?.length).toBe(16);
  expect(parseIp("example.com")).toBeUndefined();
  expect(blockedReason("1.1.1.1")).toBeUndefined();
  expect(blockedReason("::0.0.0.1")).toBe("a loopback address");
  expect(blockedReason("::127.0.0.1")).toBe("a loopback address");
});

describe("the IANA special-purpose ranges, and IPv4 carried inside IPv6", () => {
  const cases: [string, RegExp][] = [
    // IPv4 registry
    ["192.0.0.9", /IETF protocol/],
    ["192.0.2.10", /documentation/],
    ["198.51.100.7", /documentation/],
    ["203.0.113.200", /documentation/],
    ["192.88.99.1", /6to4 relay/],
    ["192.31.196.1", /special-purpose/],
    ["192.52.193.1", /special-purpose/],
    ["192.175.48.1", /special-purpose/],
    ["198.19.255.255", /benchmarking/],
    ["255.255.255.255", /reserved/],
    ["239.255.255.250", /multicast/],
    // IPv6 registry
    ["100::1", /discard-only/],
    ["100:0:0:1::5", /special-purpose/],
    ["2001:db8::1", /documentation/],
    ["3fff::1", /documentation/],
    ["2001:2::1", /IETF protocol/],
    ["2001:1::1", /IETF protocol/],
    ["2620:4f:8000::1", /special-purpose/],
    ["5f00::1", /special-purpose/],
    ["64:ff9b:1::1", /local-use NAT64/],
    ["fec0::1", /site-local/],
    ["fe80::1%eth0", /link-local/],
    // 6to4 (2002:AABB:CCDD::) carrying loopback and the metadata address, or anything else
    ["2002:7f00:1::", /loopback address \(127\.0\.0\.1\) inside a 6to4 address/],
    ["2002:a9fe:a9fe::1", /metadata address \(169\.254\.169\.254\) inside a 6to4/],
    ["2002:0a00:0001::", /private address \(10\.0\.0\.1\) inside a 6to4/],
    ["2002:808:808::1", /6to4 tunnel address/],
    // Teredo: client address inverted in the last 32 bits (7f000001 → 80fffffe)
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", /loopback address \(127\.0\.0\.1\) inside a Teredo/],
    ["2001:0:4136:e378:8000:63bf:5601:5601", /metadata address .* inside a Teredo/],
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", /Teredo tunnel address/],
    // NAT64 well-known prefix, IPv4-mapped and IPv4-compatible spellings
    ["64:ff9b::7f00:1", /loopback/],
    ["64:ff9b::169.254.169.254", /metadata/],
    ["::ffff:192.0.2.1", /documentation/],
    ["::ffff:7f00:1", /loopback/],
    ["::10.0.0.1", /private/],
  ];
  for (const [addr, why] of cases) {
    test(addr, async () => {
      expect(blockedReason(addr)).toMatch(why);
      const literal = addr.includes(":") ? `[${addr.replace(/%.*/, "")}]` : addr;
      expect((await refusal(`http://${literal}:8080/v1`)).message).toContain("DELEGATE_PROVIDER_ALLOW_HOSTS");
    });
  }

  test("a name resolving into a tunnel range is refused before any connection", async () => {
    const e = await refusal("https://tunnel.example/v1", [], async () => [{ address: "2002:7f00:1::", family: 6 }]);
    expect(e.message).toContain("tunnel.example (resolves to 2002:7f00:1::)");
    expect(e.message).toContain("inside a 6to4 address");
  });

  test("public addresses, also through NAT64 and the mapped form, stay allowed", async () => {
    for (const addr of ["8.8.8.8", "2606:4700:4700::1111", "64:ff9b::808:808", "::ffff:8.8.8.8", "2001:4860::8888"])
      expect(blockedReason(addr)).toBeUndefined();
    const url = await guardProviderUrl("http://[2606:4700:4700::1111]/v1");
    expect(url.hostname).toBe("[2606:4700:4700::1111]");
  });

  test("the allowlist takes a CIDR range of a special-purpose block", async () => {
    const url = await guardProviderUrl("http://[2001:db8::5]/v1", { allowHosts: ["2001:db8::/32"] });
    expect(url.hostname).toBe("[2001:db8::5]");
  });
});
