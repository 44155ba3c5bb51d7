/**
 * scripts/npm-launcher.sh, the `dl` command of the npm package, in the folder layouts npm
 * makes (a global install, a project's or npx's hoisted node_modules), with the real
 * package.json files of scripts/npm-packages.ts and dist/dl as the target's binary. It
 * finds the binary of this machine's target at its own version and execs it (the host's
 * child is dl itself, and SIGTERM reaches dl's own shutdown); it passes over a copy of
 * another version; and it says in one line what to do when no binary fits. The same
 * packages, packed by npm and installed by npm from a registry, are in npm-registry.release.ts.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { TARGETS, type TargetName } from "../../build.ts";
import pkg from "../../package.json" with { type: "json" };
import { LAUNCHER, launcherManifest, platformManifest, platformPackage, SCOPE } from "../../scripts/npm-packages.ts";
import { requireBinary, tempDir } from "../helpers/dl.ts";
import { MODERN_META } from "../helpers/modern.ts";
import { HOST, ROOT, run, SYSTEM_PATH } from "./helpers.ts";
import { exeOf, parentOf } from "./npm-helpers.ts";

const LAUNCHER_SH = join(ROOT, "scripts", "npm-launcher.sh");
const env = { PATH: SYSTEM_PATH, HOME: tempDir("launcher-home"), LANG: "C" };

/** The launcher package as npm unpacks it into `dir`. */
function placeLauncher(dir: string): void {
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(launcherManifest([HOST], pkg.version), null, 2));
  writeFileSync(join(dir, "bin", "dl"), readFileSync(LAUNCHER_SH), { mode: 0o755 });
}

/** A target's package in `nodeModules`, its bin/dl being dist/dl. */
function placePlatform(nodeModules: string, version = pkg.version, target: TargetName = HOST): string {
  const dir = join(nodeModules, platformPackage(target));
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(platformManifest(target, version), null, 2));
  symlinkSync(requireBinary(), join(dir, "bin", "dl"));
  return dir;
}

/** `npm install -g`: prefix/lib/node_modules/delegate-local with its dependency nested, links in prefix/bin. */
function globalInstall(o: { platform?: boolean } = {}): { bin: string; pkgDir: string } {
  const prefix = tempDir("npm-prefix");
  const pkgDir = join(prefix, "lib", "node_modules", LAUNCHER);
  placeLauncher(pkgDir);
  if (o.platform !== false) placePlatform(join(pkgDir, "node_modules"));
  mkdirSync(join(prefix, "bin"));
  for (const name of ["dl", "delegate-wait", LAUNCHER])
    symlinkSync(`../lib/node_modules/${LAUNCHER}/bin/dl`, join(prefix, "bin", name));
  return { bin: join(prefix, "bin"), pkgDir };
}

const versionOf = async (cmd: string[]) => {
  const r = await run([...cmd, "--version", "--json"], env);
  return { ...r, info: r.code === 0 ? (JSON.parse(r.stdout) as { version: string; target: string }) : undefined };
};

describe("the npm launcher finds its binary", () => {
  test("a global install: dl and delegate-local run dist/dl; delegate-wait runs dl wait", async () => {
    const { bin } = globalInstall();
    for (const name of ["dl", LAUNCHER]) {
      const v = await versionOf([join(bin, name)]);
      expect(v.stderr).toBe("");
      expect(v.info).toMatchObject({ version: pkg.version, target: HOST });
    }
    const wait = await run([join(bin, "delegate-wait"), "--help"], env);
    expect(wait.code).toBe(0);
    expect(wait.stdout).toContain("Usage: dl wait");
  });

  test("a hoisted node_modules (a project's, npx's): the dependency beside the launcher, run through node_modules/.bin", async () => {
    const project = tempDir("npm-project");
    const nm = join(project, "node_modules");
    placeLauncher(join(nm, LAUNCHER));
    placePlatform(nm);
    mkdirSync(join(nm, ".bin"));
    symlinkSync(`../${LAUNCHER}/bin/dl`, join(nm, ".bin", LAUNCHER));
    expect((await versionOf([join(nm, ".bin", LAUNCHER)])).info).toMatchObject({ target: HOST });
    // Started by sh with a relative path, as a package manager's shim may.
    const r = await run(["sh", `node_modules/${LAUNCHER}/bin/dl`, "--version"], env, project);
    expect(r.stdout).toStartWith(`dl ${pkg.version} `);
  });

  test("a copy of another version is passed over for the right one further up", async () => {
    const project = tempDir("npm-stale");
    const nm = join(project, "node_modules");
    placeLauncher(join(nm, LAUNCHER));
    placePlatform(join(nm, LAUNCHER, "node_modules"), "0.0.1");
    placePlatform(nm);
    expect((await versionOf(["sh", join(nm, LAUNCHER, "bin", "dl")])).info).toMatchObject({ version: pkg.version });
  });
});

/** A folder of stand-ins for the system commands of another machine (`name` → script body). */
function machine(commands: Record<string, string>): string {
  const dir = tempDir("machine");
  for (const [name, body] of Object.entries(commands))
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return dir;
}

/** A target's package whose bin/dl only says which target it is. */
function placeNamedPlatform(nodeModules: string, target: TargetName): void {
  const dir = join(nodeModules, platformPackage(target));
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(platformManifest(target, pkg.version), null, 2));
  writeFileSync(join(dir, "bin", "dl"), `#!/bin/sh\necho "${target} $*"\n`, { mode: 0o755 });
}

describe("the npm launcher picks the target of the machine it runs on", () => {
  // Stand-ins for the uname, ldd and sysctl of machines this one is not (Alpine, a Mac).
  const ALPINE = { ldd: "echo 'musl libc (x86_64)' >&2; exit 1" };
  const ROSETTA = {
    uname: '[ "$1" = -s ] && echo Darwin || echo x86_64',
    sysctl: '[ "$2" = sysctl.proc_translated ] && echo 1',
  };

  test("musl Linux (ldd names musl): the -musl package, not the glibc one beside it", async () => {
    const { bin, pkgDir } = globalInstall({ platform: false });
    for (const t of ["linux-x64", "linux-x64-musl"] as const) placeNamedPlatform(join(pkgDir, "node_modules"), t);
    const r = await run([join(bin, "dl"), "serve"], { ...env, PATH: `${machine(ALPINE)}:${SYSTEM_PATH}` });
    expect(r.stdout).toBe("linux-x64-musl serve\n");
  });

  test("macOS under Rosetta: the native darwin-arm64 package when there, else the darwin-x64 one npm chose", async () => {
    const { bin, pkgDir } = globalInstall({ platform: false });
    const path = `${machine(ROSETTA)}:${SYSTEM_PATH}`;
    placeNamedPlatform(join(pkgDir, "node_modules"), "darwin-x64");
    expect((await run([join(bin, "dl"), "--version"], { ...env, PATH: path })).stdout).toBe("darwin-x64 --version\n");
    placeNamedPlatform(join(pkgDir, "node_modules"), "darwin-arm64");
    expect((await run([join(bin, "dl"), "--version"], { ...env, PATH: path })).stdout).toBe("darwin-arm64 --version\n");
  });
});

describe("the npm launcher and install.sh", () => {
  /** The body of a POSIX sh function `name() { … }` (to its closing brace at column 0). */
  const body = (file: string, name: string) => {
    const m = new RegExp(`^${name}\\(\\) \\{\\n([\\s\\S]*?)^\\}`, "m").exec(readFileSync(file, "utf8"));
    if (!m) throw new Error(`${file} has no function ${name}`);
    return m[1]!.replace(/^\s+/gm, "");
  };

  test("tell glibc from musl by the same steps (the two scripts cannot share code; they must not drift)", () => {
    const launcher = body(LAUNCHER_SH, "libc");
    expect(launcher).toContain("ldd --version");
    expect(launcher).toBe(body(join(ROOT, "install.sh"), "detect_libc"));
  });
});

describe("the npm launcher says what to do when no binary fits", () => {
  test("no package for this machine: one line naming the target, the package, npm's flag and install.sh; exit 1", async () => {
    const { bin } = globalInstall({ platform: false });
    const r = await run([join(bin, "dl"), "serve"], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    for (const part of [`${HOST}, is not installed`, `${platformPackage(HOST)}@${pkg.version}`, "--include=optional"])
      expect(r.stderr).toContain(part);
    expect(r.stderr).toContain("sh install.sh --from");
  });

  test("only a copy of another version: the message names it", async () => {
    const { bin, pkgDir } = globalInstall({ platform: false });
    const stale = placePlatform(join(pkgDir, "node_modules"), "0.0.1");
    const r = await run([join(bin, "dl"), "--version"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${realpathSync(stale)} is version 0.0.1`);
  });

  test.skipIf(process.platform !== "linux")(
    "a machine dl has no build for (setarch i686): the platform and the supported list",
    async () => {
      const { bin } = globalInstall();
      const r = await run(["setarch", "i686", join(bin, "dl"), "--version"], env);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("no dl build for Linux i686");
      expect(r.stderr).toContain(`dl is built for ${Object.keys(TARGETS).join(", ")}.`);
      expect(r.stderr).toContain("install.sh");
    },
  );

  test("the launcher's scope and supported list are build.ts's targets and npm-packages.ts's scope", () => {
    const text = readFileSync(LAUNCHER_SH, "utf8");
    expect(text).toContain(`\nscope=${SCOPE}\n`);
    expect(text).toContain(`\nsupported='${Object.keys(TARGETS).join(", ")}'\n`);
  });
});

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const DISCOVER = { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: MODERN_META } };

describe.skipIf(process.platform !== "linux")("the npm launcher execs dl", () => {
  for (const [era, request, answer] of [
    ["2025-11-25 initialize", INITIALIZE, { serverInfo: { name: "delegate-local", version: pkg.version } }],
    ["2026-07-28 server/discover", DISCOVER, { supportedVersions: expect.arrayContaining(["2026-07-28"]) }],
  ] as const)
    test(`dl serve through the launcher answers ${era}; the host's child is dl itself; SIGTERM reaches dl's shutdown`, async () => {
      const { bin } = globalInstall();
      const p = Bun.spawn([join(bin, "dl"), "serve"], { env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
      p.stdin.write(`${JSON.stringify(request)}\n`);
      p.stdin.flush();
      expect(await firstLine(p.stdout)).toMatchObject({ id: 1, result: answer });
      // No shell in between: the process this test started runs dist/dl, and its parent is this test.
      expect(exeOf(p.pid)).toBe(realpathSync(requireBinary()));
      expect(parentOf(p.pid)).toBe(process.pid);
      p.kill("SIGTERM");
      // dl's own handler turns SIGTERM into a clean exit 0; a shell that died of it would not.
      expect(await p.exited).toBe(0);
      expect(p.signalCode).toBeNull();
    });
});

/** The first JSON line of a stream, which is left open. */
async function firstLine(stream: ReadableStream<Uint8Array>): Promise<unknown> {
  const reader = stream.getReader();
  let buf = "";
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return JSON.parse(buf.slice(0, buf.indexOf("\n")));
}

/**
 * What dl prints for a person or a host to run names the command they type — the bin link
 * npm put on PATH, or npx — never the binary inside node_modules that the launcher execs
 * (which a person would not type and an upgrade moves): the launcher passes itself as
 * DELEGATE_COMMAND.
 */
describe("the lines dl prints name the launcher, not the binary in node_modules", () => {
  const registration = async (cmd: string[], home: string, cwd?: string) => {
    const r = await run(
      [...cmd, "init", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--json"],
      { ...env, HOME: home },
      cwd,
    );
    expect(r.stderr).toBe("");
    return JSON.parse(r.stdout).register_line as string;
  };

  test("a global install: dl init's line, dl serve --check's verdict and a submit's watch name prefix/bin/dl", async () => {
    const { bin } = globalInstall();
    const home = tempDir("launcher-lines");
    const dl = join(bin, "dl");
    expect(await registration([dl], home)).toBe(`claude mcp add delegate-local --scope user -- ${dl} serve`);
    // Started by name from PATH, as a person types it.
    const byName = await run(["sh", "-c", "dl serve --check"], { ...env, HOME: home, PATH: `${bin}:${SYSTEM_PATH}` });
    expect(byName.stdout.trimEnd().split("\n").at(-1)).toEndWith(` ${dl} serve`);
    // From the prefix with a relative path: made absolute, the link itself kept.
    expect(await registration(["./bin/dl"], home, join(bin, ".."))).toContain(`-- ${realpathSync(bin)}/dl serve`);
    const agents = tempDir("launcher-agents");
    writeFileSync(join(agents, "helper.md"), "---\nname: helper\n---\nHelp.\n");
    const transport = new StdioClientTransport({
      command: dl,
      args: ["serve"],
      env: { ...env, HOME: home, DELEGATE_LOCAL_URL: "http://127.0.0.1:9", DELEGATE_LOCAL_AGENTS_DIR: agents },
      stderr: "pipe",
    });
    const client = new Client({ name: "launcher-test", version: "1" });
    await client.connect(transport);
    try {
      const workdir = tempDir("launcher-work");
      const res = await client.callTool(
        { name: "submit_agent", arguments: { tasks: [{ agent_name: "helper", task: "go", workdir }] } },
        { timeout: 60_000 },
      );
      const out = res.structuredContent as { watch: string; jobs: { id: string }[] };
      expect(out.watch).toBe(`${dl} wait ${out.jobs[0]!.id}`);
      const waited = await run([dl, "wait", out.jobs[0]!.id, "--timeout", "60"], { ...env, HOME: home });
      expect(waited.stdout).toContain(out.jobs[0]!.id);
    } finally {
      await client.close();
    }
  }, 90_000);

  test("run from npx's cache: the line is npx -y delegate-local serve, which outlives that cache", async () => {
    const home = tempDir("launcher-npx");
    const nm = join(home, ".npm", "_npx", "0123abcd", "node_modules");
    placeLauncher(join(nm, LAUNCHER));
    placePlatform(nm);
    mkdirSync(join(nm, ".bin"));
    symlinkSync(`../${LAUNCHER}/bin/dl`, join(nm, ".bin", LAUNCHER));
    expect(await registration([join(nm, ".bin", LAUNCHER)], home)).toBe(
      `claude mcp add delegate-local --scope user -- npx -y ${LAUNCHER} serve`,
    );
  });

  test("the binary started directly names itself; a DELEGATE_COMMAND that is no command is refused by name", async () => {
    const home = tempDir("launcher-direct");
    expect(await registration([requireBinary()], home)).toBe(
      `claude mcp add delegate-local --scope user -- ${requireBinary()} serve`,
    );
    const r = await run([requireBinary(), "status"], { ...env, HOME: home, DELEGATE_COMMAND: "dl" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('DELEGATE_COMMAND="dl" is invalid: expected an absolute path, or npx');
  });
});
