/**
 * install.sh against a real release of the host target (made by scripts/release.ts) in
 * a fresh HOME: it installs from a folder and from a base URL, refuses a tampered
 * archive, a missing SHA256SUMS entry and an unknown platform (each with one line,
 * installing nothing), and upgrades dl while the old binary is serving MCP without
 * disturbing that server. Where a test is about install.sh's own choices (the checksum,
 * the delegate-wait link, the file it replaces), a stand-in release whose dl is a script
 * answering --version takes the same steps without unpacking the 110 MB binary again.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  linkSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { tempDir } from "../helpers/dl.ts";
import { freshHome, HOST, hostRelease, install, run, SYSTEM_PATH, standInRelease, unpack } from "./helpers.ts";

type Release = { dir: string; archive: string };
let release: Release;
/** A release whose dl is a script answering --version (helpers.ts), for install.sh's own choices. */
let standIn: Release;
beforeAll(async () => {
  release = await hostRelease();
  standIn = await standInRelease();
}, 300_000);

/**
 * A release folder a test may spoil one file of: `spoilt` is written with the bytes the
 * test gives, the other file (SHA256SUMS or the 110 MB archive) is a hard link to the
 * release's own, which install.sh only reads.
 */
function releaseWith(of: Release, spoilt: "SHA256SUMS" | "archive", bytes: string | Uint8Array): string {
  const dir = tempDir("release-copy");
  const name = spoilt === "archive" ? of.archive : spoilt;
  for (const f of ["SHA256SUMS", of.archive])
    if (f === name) writeFileSync(join(dir, f), bytes);
    else linkSync(join(of.dir, f), join(dir, f));
  return dir;
}

/** Nothing installed and nothing left behind: no dl, no half-written temporary file. */
function expectNothingInstalled(home: string, tmp: string): void {
  const bin = join(home, ".local", "bin");
  expect(existsSync(bin) ? readdirSync(bin) : []).toEqual([]);
  expect(readdirSync(tmp)).toEqual([]);
}

function expectOneLine(stderr: string, text: string): void {
  expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(stderr).toContain(text);
}

describe("install.sh", () => {
  test("installs from a folder into ~/.local/bin of a fresh HOME; a second run changes nothing; delegate-wait is its link", async () => {
    // One HOME through two runs (each install unpacks the 110 MB binary); the second checks what the first left.
    const { home, env } = freshHome("home");
    const bin = join(home, ".local", "bin");
    const dl = join(bin, "dl");
    const r = await install(["--from", release.dir], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(statSync(dl).mode & 0o777).toBe(0o755);
    const v = await run([dl, "--version", "--json"], env);
    expect(JSON.parse(v.stdout)).toMatchObject({ target: HOST });
    expect(r.stdout).toContain(`installed dl `);
    // The one registration line: the same as the installed dl init prints, with no --env and no key.
    const init = await run([dl, "init", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--json"], env);
    const line = JSON.parse(init.stdout).register_line as string;
    expect(line).toBe(`claude mcp add delegate-local --scope user -- ${dl} serve`);
    expect(r.stdout).toContain(`\n  ${line}\n`);
    expect(r.stdout).toContain(`Next: ${dl} init`);
    expect(r.stdout).toContain(`${bin} is not on your PATH`);
    // delegate-wait (the predecessor's watcher name) is a link to dl, and runs as dl wait.
    expect(readlinkSync(join(bin, "delegate-wait"))).toBe("dl");
    const w = await run([join(bin, "delegate-wait"), "cx-0000000000", "--timeout", "0.1"], env);
    expect(w.stdout + w.stderr).toContain("cx-0000000000");

    // Run 2, with the folder on PATH: nothing changes, and the link it made itself is left as it is, unmentioned.
    const before = statSync(dl);
    const again = await install(["--from", release.dir], { ...env, PATH: `${bin}:${env.PATH}` });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("is already installed at");
    expect(again.stdout).not.toContain("not on your PATH");
    expect(again.stdout).not.toContain("kept");
    expect(statSync(dl).ino).toBe(before.ino);
    expect(readlinkSync(join(bin, "delegate-wait"))).toBe("dl");
    expect(readdirSync(bin).sort()).toEqual(["delegate-wait", "dl"]);

    // Two installs of the 110 MB binary can take half a minute on a loaded machine.
  }, 120_000);

  test("delegate-wait: someone else's file or link of that name is kept; once it is gone, the next run makes its own link again", async () => {
    // install.sh's own choice, made after it installed: a stand-in release (a dl script
    // answering --version) takes the same steps without unpacking a 110 MB binary each run.
    const { home, env } = freshHome("home");
    const bin = join(home, ".local", "bin");
    const first = await install(["--from", standIn.dir], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("installed dl 0.0.0-standin");
    expect(readlinkSync(join(bin, "delegate-wait"))).toBe("dl");

    // Someone else's delegate-wait (the Python predecessor's file) is not replaced.
    rmSync(join(bin, "delegate-wait"));
    writeFileSync(join(bin, "delegate-wait"), "#!/bin/sh\necho theirs\n");
    const file = await install(["--from", standIn.dir], env);
    expect(file.code).toBe(0);
    expect(file.stdout).toContain("kept");
    expect(readFileSync(join(bin, "delegate-wait"), "utf8")).toContain("theirs");

    // Nor is a delegate-wait link the user made to their own watcher.
    rmSync(join(bin, "delegate-wait"));
    const theirs = join(home, "predecessor-wait");
    writeFileSync(theirs, "#!/bin/sh\necho theirs\n");
    symlinkSync(theirs, join(bin, "delegate-wait"));
    const link = await install(["--from", standIn.dir], env);
    expect(link.code).toBe(0);
    expect(link.stdout).toContain(`kept ${join(bin, "delegate-wait")}`);
    expect(readlinkSync(join(bin, "delegate-wait"))).toBe(theirs);

    // Once the user's link is gone, the next run makes its own again.
    rmSync(join(bin, "delegate-wait"));
    const remade = await install(["--from", standIn.dir], env);
    expect(remade.code).toBe(0);
    expect(remade.stdout).not.toContain("kept");
    expect(readlinkSync(join(bin, "delegate-wait"))).toBe("dl");
  });

  test("a --from folder that does not exist is named as such", async () => {
    const { env } = freshHome("home");
    const r = await install(["--from", "/nonexistent-release-dir"], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("--from /nonexistent-release-dir is not a folder");
  });

  test("refuses a tampered archive in one line and installs nothing", async () => {
    // The stand-in's archive: the checksum is install.sh's, whatever the archive holds
    // (the real release's tampered download is refused in the --url test below).
    const { home, env } = freshHome("home");
    const bytes = readFileSync(join(standIn.dir, standIn.archive));
    bytes[bytes.length >> 1]! ^= 0xff;
    const dir = releaseWith(standIn, "archive", bytes);
    const r = await install(["--from", dir], env);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, `checksum mismatch for ${standIn.archive}`);
    expectNothingInstalled(home, env.TMPDIR!);
  });

  test("refuses a release whose SHA256SUMS has no entry for this platform", async () => {
    const { home, env } = freshHome("home");
    const sums = readFileSync(join(release.dir, "SHA256SUMS"), "utf8");
    const dir = releaseWith(
      release,
      "SHA256SUMS",
      sums.replace(/^.*\n/gm, (l) => (l.includes(release.archive) ? "" : l)),
    );
    const r = await install(["--from", dir], env);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, `has no entry for ${HOST}`);
    expectNothingInstalled(home, env.TMPDIR!);
  });

  test("refuses an unknown platform (a fake uname) in one line", async () => {
    const fakes = tempDir("fake-uname");
    for (const [os, arch] of [
      ["SunOS", "sun4v"],
      ["Linux", "riscv64"],
      ["Darwin", "ppc"],
    ]) {
      writeFileSync(join(fakes, "uname"), `#!/bin/sh\ncase $1 in -s) echo ${os} ;; -m) echo ${arch} ;; esac\n`);
      chmodSync(join(fakes, "uname"), 0o755);
      const { home, env } = freshHome("home");
      const r = await install(["--from", release.dir], { ...env, PATH: `${fakes}:${env.PATH}` });
      expect(r.code).toBe(1);
      expectOneLine(r.stderr, `no dl build for ${os} ${arch}`);
      expectNothingInstalled(home, env.TMPDIR!);
    }
  });

  test("picks the musl build where ldd names musl, and on --libc musl", async () => {
    const fakes = tempDir("fake-ldd");
    // musl's ldd prints its banner on stderr and exits 1 for --version.
    writeFileSync(join(fakes, "ldd"), "#!/bin/sh\necho 'musl libc (x86_64)' >&2\necho 'Version 1.2.5' >&2\nexit 1\n");
    chmodSync(join(fakes, "ldd"), 0o755);
    for (const [args, path] of [
      [[], `${fakes}:${SYSTEM_PATH}`],
      [["--libc", "musl"], SYSTEM_PATH],
    ] as const) {
      const { home, env } = freshHome("home");
      // The host-only release has no musl archive, so picking it shows as a refusal naming it.
      const r = await install(["--from", release.dir, ...args], { ...env, PATH: path });
      expect(r.code).toBe(1);
      expectOneLine(r.stderr, `has no entry for ${HOST}-musl`);
      expectNothingInstalled(home, env.TMPDIR!);
    }
  });

  test("--url installs a real release from a base URL, its SHA256SUMS written with CRLF line endings (on Windows); refuses a tampered download; upgrades dl while the old binary runs dl serve, which keeps answering", async () => {
    // One HOME through both installs: the real release, fetched with curl, is the old dl
    // serving MCP; the upgrade is a stand-in of another version (install.sh replaces the
    // file whatever it holds), and so is the tampered download it refuses.
    const { home, env } = freshHome("home");
    const next = await standInRelease("99.0.0-upgrade");
    const sums = readFileSync(join(release.dir, "SHA256SUMS"), "utf8");
    const tampered = readFileSync(join(next.dir, next.archive));
    tampered[tampered.length >> 1]! ^= 0x01;
    const served: Record<string, Record<string, () => string | Blob | Uint8Array>> = {
      crlf: {
        SHA256SUMS: () => sums.replace(/\r?\n/g, "\r\n"),
        [release.archive]: () => Bun.file(join(release.dir, release.archive)),
      },
      good: {
        SHA256SUMS: () => Bun.file(join(next.dir, "SHA256SUMS")),
        [next.archive]: () => Bun.file(join(next.dir, next.archive)),
      },
      bad: { SHA256SUMS: () => Bun.file(join(next.dir, "SHA256SUMS")), [next.archive]: () => tampered },
    };
    using server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const [, which = "", name = ""] = new URL(req.url).pathname.split("/");
        const body = served[which]?.[name];
        return body ? new Response(body()) : new Response("not found", { status: 404 });
      },
    });
    const base = (which: string) => `http://127.0.0.1:${server.port}/${which}`;

    const crlf = await install(["--url", base("crlf")], env);
    expect(crlf.stderr).toBe("");
    expect(crlf.code).toBe(0);
    const dl = join(home, ".local", "bin", "dl");
    expect(statSync(dl).isFile()).toBe(true);

    const bad = freshHome("home");
    const refused = await install(["--url", base("bad")], bad.env);
    expect(refused.code).toBe(1);
    expectOneLine(refused.stderr, `checksum mismatch for ${next.archive}`);
    expectNothingInstalled(bad.home, bad.env.TMPDIR!);

    const transport = new StdioClientTransport({ command: dl, args: ["serve"], env, stderr: "ignore" });
    const client = new Client({ name: "dl-upgrade-test", version: "1" });
    await client.connect(transport);
    try {
      const oldVersion = client.getServerVersion()?.version;
      const tools = (await client.listTools()).tools.map((t) => t.name);
      const r = await install(["--url", `${base("good")}/`], env);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("installed dl 99.0.0-upgrade");
      expect((await run([dl, "--version"], env)).stdout).toStartWith("dl 99.0.0-upgrade ");
      // The file at dl's name is the new release's, byte for byte.
      const unpacked = await unpack(join(next.dir, next.archive));
      expect(readFileSync(dl).equals(readFileSync(unpacked))).toBe(true);
      // The old server still runs its own binary and answers as before.
      await client.ping();
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(tools);
      expect(client.getServerVersion()?.version).toBe(oldVersion);
      expect(readdirSync(join(home, ".local", "bin")).sort()).toEqual(["delegate-wait", "dl"]);
    } finally {
      await client.close();
    }
  }, 120_000);
});
