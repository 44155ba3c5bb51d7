import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { guardProviderUrl } from "../../src/backends/ssrf.ts";
import { isDlError } from "../../src/errors.ts";
import { connectDl, type DlSession, tempDir } from "../helpers/dl.ts";

/**
 * The SSRF security matrix: every spelling of loopback and every special-purpose range a
 * caller could hand `delegate_to_provider` is refused before any connection. Literal
 * addresses never reach the resolver; names are judged on every address the (scripted)
 * resolver returns, so no test depends on the network.
 */

/** Loopback and "this host", spelled every way a URL parser accepts. `P` is the port. */
const LOOPBACK_SPELLINGS = [
  "127.0.0.1",
  "127.1",
  "127.0.1",
  "127.255.255.254",
  "0x7f.1",
  "0x7f.0.0.1",
  "0x7f000001",
  "2130706433",
  "017700000001",
  "0177.0.0.1",
  "127.0.0.1.",
  "%31%32%37.0.0.1",
  "127\u30020\u30020\u30021",
  "０x7f.1",
  "0.0.0.0",
  "0",
  "[::1]",
  "[0:0:0:0:0:0:0:1]",
  "[::ffff:127.0.0.1]",
  "[::ffff:7f00:1]",
  "[0:0:0:0:0:ffff:127.0.0.1]",
  "[::]",
  "[64:ff9b::127.0.0.1]",
  "[2002:7f00:1::]",
  "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
];

/** One address inside each special-purpose range (IANA registries, metadata, multicast). */
const SPECIAL_ADDRESSES = [
  "169.254.169.254",
  "10.1.2.3",
  "172.16.0.1",
  "172.31.255.255",
  "192.168.1.1",
  "100.64.0.1",
  "100.127.255.254",
  "169.254.1.1",
  "192.0.0.8",
  "192.0.2.1",
  "192.31.196.1",
  "192.52.193.1",
  "192.88.99.1",
  "192.175.48.1",
  "198.18.0.1",
  "198.19.255.254",
  "198.51.100.1",
  "203.0.113.1",
  "224.0.0.1",
  "239.255.255.250",
  "240.0.0.1",
  "255.255.255.255",
  "0.1.2.3",
  "[fd00:ec2::254]",
  "[fc00::1]",
  "[fd12:3456::1]",
  "[fe80::1]",
  "[fec0::1]",
  "[ff02::1]",
  "[2001:db8::1]",
  "[2001::1]",
  "[2002::1]",
  "[100::1]",
  "[64:ff9b:1::1]",
  "[3fff::1]",
  "[5f00::1]",
  "[2620:4f:8000::1]",
  "[::ffff:10.0.0.1]",
  "[::ffff:169.254.169.254]",
  "[::ffff:192.168.0.1]",
];

const METADATA_NAMES = [
  "metadata.google.internal",
  "metadata.google.internal.",
  "METADATA.GOOGLE.INTERNAL",
  "metadata",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
];

type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

const neverResolve: Lookup = async (host) => {
  throw new Error(`the resolver was asked about ${host}: a literal address must be judged without it`);
};

async function refused(url: string, lookup: Lookup = neverResolve): Promise<string> {
  try {
    await guardProviderUrl(url, { lookup });
  } catch (e) {
    if (!isDlError(e, "bad_input")) throw e;
    return (e as Error).message;
  }
  throw new Error(`${url} was allowed`);
}

describe("SSRF matrix: literal addresses, judged without the resolver", () => {
  for (const host of LOOPBACK_SPELLINGS) {
    test(`loopback spelling ${host} is refused`, async () => {
      const msg = await refused(`http://${host}:4000/v1`);
      expect(msg).toMatch(/loopback|unspecified|Teredo|6to4|dl refuses/);
      expect(msg).toContain("DELEGATE_PROVIDER_ALLOW_HOSTS");
    });
  }
  for (const host of SPECIAL_ADDRESSES) {
    test(`special-purpose address ${host} is refused`, async () => {
      expect(await refused(`https://${host}/v1`)).toContain("dl refuses such targets");
    });
  }
  test("public literal addresses pass without asking the resolver", async () => {
    for (const host of ["8.8.8.8", "1.1.1.1", "[2606:4700:4700::1111]", "93.184.216.34"]) {
      expect((await guardProviderUrl(`https://${host}/v1`, { lookup: neverResolve })).protocol).toBe("https:");
    }
  });
});

describe("SSRF matrix: names, judged on every address the resolver returns", () => {
  for (const name of METADATA_NAMES) {
    test(`metadata name ${name} is refused by name, before resolving`, async () => {
      expect(await refused(`http://${name}/computeMetadata/v1`)).toContain("cloud metadata");
    });
  }
  test("localhost in any case, with a trailing dot, is refused on what it resolves to", async () => {
    const local = async () => [
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ];
    for (const name of ["localhost", "localhost.", "LOCALHOST", "LocalHost."]) {
      expect(await refused(`http://${name}:8080/`, local)).toContain("loopback");
    }
  });
  test("one private address among public ones is enough to refuse", async () => {
    for (const bad of ["10.0.0.1", "::1", "::ffff:127.0.0.1", "fe80::1", "169.254.169.254"]) {
      const mixed = async () => [
        { address: "93.184.216.34", family: 4 },
        { address: bad, family: bad.includes(":") ? 6 : 4 },
      ];
      expect(await refused("https://api.example.com/v1", mixed)).toContain(`resolves to ${bad}`);
    }
  });
  test("a name resolving only to public addresses passes; one that resolves to nothing is refused", async () => {
    const pub = async () => [{ address: "93.184.216.34", family: 4 }];
    expect((await guardProviderUrl("https://api.example.com/v1", { lookup: pub })).host).toBe("api.example.com");
    expect(await refused("https://api.example.com/v1", async () => [])).toContain("resolved to no address");
    expect(await refused("https://nope.invalid/v1", neverResolve)).toContain("could not be resolved");
  });
  test("credentials in the URL are refused before anything else, and not echoed", async () => {
    const msg = await refused("https://user:s3cret-pw@api.example.com/v1");
    expect(msg).toContain("must not contain credentials");
    expect(msg).not.toContain("s3cret-pw");
  });
});

describe("SSRF matrix through dl serve: no connection is ever made", () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  let dl: DlSession;
  beforeAll(async () => {
    server = createServer((sock) => {
      connections++;
      sock.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
    dl = await connectDl({ DELEGATE_CODEX_STATE_DIR: tempDir("ssrf-e2e") });
  });
  afterAll(async () => {
    await dl?.close();
    server?.close();
  });

  test("delegate_to_provider refuses every loopback spelling of a live local server; it sees no connection", async () => {
    const hosts = LOOPBACK_SPELLINGS.filter((h) => !["0", "0.0.0.0", "[::]"].includes(h)).concat(["localhost"]);
    for (const host of hosts) {
      const r = (await dl.client.callTool({
        name: "delegate_to_provider",
        arguments: {
          provider_url: `http://${host}:${port}/v1`,
          api_key: "ssrf-matrix-key-Z9",
          agent_name: "any",
          task: "t",
          model: "m",
        },
      })) as { isError?: boolean; content: { text: string }[] };
      expect(r.isError, host).toBe(true);
      expect(r.content[0]!.text, host).toContain("refuses such targets");
      expect(r.content[0]!.text).not.toContain("ssrf-matrix-key-Z9");
    }
    expect(connections).toBe(0);
  }, 60_000);
});
