/**
 * `npm run test:release`: the npm tarballs of dist/release, installed the ways a user
 * installs them, with the real npm client. First from the tarballs alone into a fresh
 * prefix (no registry at all); then published to a local registry (Verdaccio on
 * 127.0.0.1) and installed from it in fresh HOMEs: `npm install -g delegate-local` and
 * `npx -y delegate-local`, each picking this machine's target package, with `dl serve`
 * answering both protocol eras through the launcher and SIGTERM reaching dl; npm's
 * selection of every target by os/cpu/libc; the linux-arm64 package run under qemu-user,
 * also through the launcher; and the clear refusals of a machine without a build and of
 * an install without its optional dependency. Nothing here reaches beyond this machine.
 *
 * Not a *.test.ts file: it needs `npm run release` first, which `npm run test:release` does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { TARGETS, type TargetName } from "../../build.ts";
import pkg from "../../package.json" with { type: "json" };
import { LAUNCHER, platformPackage, SCOPE, tarballName } from "../../scripts/npm-packages.ts";
import { MODERN_META } from "../helpers/modern.ts";
import { until } from "../helpers/until.ts";
import { HOST, hostRelease, ROOT, run } from "./helpers.ts";
import {
  asArm64,
  childrenOf,
  exeOf,
  exeOfLive,
  npmHome,
  parentOf,
  publish,
  type Registry,
  startRegistry,
} from "./npm-helpers.ts";

const DIR = join(ROOT, "dist", "release");
const ALL = Object.keys(TARGETS) as TargetName[];
const tarball = (name: string) => join(DIR, tarballName(name, pkg.version));
const platformDir = (prefix: string, t: TargetName) =>
  join(prefix, "lib", "node_modules", LAUNCHER, "node_modules", platformPackage(t));

let registry: Registry;
beforeAll(async () => {
  if (!existsSync(tarball(LAUNCHER))) throw new Error(`${tarball(LAUNCHER)} is missing: run npm run test:release`);
  registry = await startRegistry();
  for (const t of ALL) await publish(registry.url, tarball(platformPackage(t)));
  await publish(registry.url, tarball(LAUNCHER));
}, 600_000);
afterAll(async () => {
  await registry?.stop();
});

/** The target packages npm put beside (under) the launcher of a global install. */
function installedTargets(prefix: string): string[] {
  const scope = join(prefix, "lib", "node_modules", LAUNCHER, "node_modules", SCOPE);
  return existsSync(scope) ? readdirSync(scope) : [];
}

async function versionJson(cmd: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
  const r = await run([...cmd, "--version", "--json"], env);
  expect(`${r.stderr}exit ${r.code}`).toBe("exit 0");
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** MCP over stdio to `cmd serve`, in the legacy era (initialize) or the modern one (server/discover). */
async function eraSession(cmd: string[], env: Record<string, string>, mode: "legacy" | "auto" = "auto") {
  const transport = new StdioClientTransport({
    command: cmd[0]!,
    args: [...cmd.slice(1), "serve"],
    env,
    stderr: "pipe",
  });
  const client = new Client({ name: "dl-npm-test", version: "1" }, { versionNegotiation: { mode } });
  await client.connect(transport);
  const answer = {
    era: client.getProtocolEra(),
    server: client.getServerVersion(),
    tools: (await client.listTools()).tools.map((t) => t.name),
    pid: transport.pid,
  };
  return { answer, client, close: () => client.close() };
}

describe("from the tarballs, with no registry", () => {
  test("npm install -g of the launcher and the linux-x64 tarball into a fresh prefix: dl --version runs the linux-x64 binary", async () => {
    const { prefix, env } = npmHome("npm-tarballs");
    const r = await run(["npm", "install", "-g", "--offline", tarball(platformPackage(HOST)), tarball(LAUNCHER)], env);
    expect(`${r.stderr}exit ${r.code}`).toBe("exit 0");
    expect(await versionJson([join(prefix, "bin", "dl")], env)).toMatchObject({ version: pkg.version, target: HOST });
  }, 120_000);
});

describe("from the local registry", () => {
  let global: ReturnType<typeof npmHome>;
  test("npm install -g delegate-local in a fresh HOME installs dl, delegate-wait and only this machine's target", async () => {
    global = npmHome("npm-global", registry.url);
    const r = await run(["npm", "install", "-g", LAUNCHER], global.env);
    expect(`${r.stderr}exit ${r.code}`).toBe("exit 0");
    expect(readdirSync(join(global.prefix, "bin")).sort()).toEqual([LAUNCHER, "delegate-wait", "dl"].sort());
    expect(installedTargets(global.prefix)).toEqual([HOST]);
    const dl = join(global.prefix, "bin", "dl");
    expect(await versionJson([dl], global.env)).toMatchObject({ version: pkg.version, target: HOST });
    const wait = await run([join(global.prefix, "bin", "delegate-wait"), "--help"], global.env);
    expect(wait.stdout).toContain("Usage: dl wait");
  }, 180_000);

  for (const mode of ["legacy", "auto"] as const)
    test(`dl serve through the installed launcher answers the ${mode === "auto" ? "2026-07-28" : "2025-11-25"} era; the host's child is the target's dl`, async () => {
      const { answer, close } = await eraSession([join(global.prefix, "bin", "dl")], global.env, mode);
      expect(answer.era).toBe(mode === "auto" ? "modern" : "legacy");
      expect(answer.server).toMatchObject({ name: "delegate-local", version: pkg.version });
      expect(answer.tools).toContain("list_local_agents");
      expect(exeOf(answer.pid!)).toBe(realpathSync(join(platformDir(global.prefix, HOST), "bin", "dl")));
      await close();
    }, 60_000);

  test("SIGTERM to the process the host started reaches dl, which stops cleanly (exit 0)", async () => {
    const p = Bun.spawn([join(global.prefix, "bin", "dl"), "serve"], {
      env: global.env,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const discover = { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: MODERN_META } };
    p.stdin.write(`${JSON.stringify(discover)}\n`);
    p.stdin.flush();
    const first = await p.stdout.getReader().read();
    expect(new TextDecoder().decode(first.value)).toContain('"supportedVersions"');
    expect(parentOf(p.pid)).toBe(process.pid);
    p.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect(p.signalCode).toBeNull();
  }, 60_000);

  test("npx -y delegate-local in a fresh HOME picks this machine's target", async () => {
    const { env, home } = npmHome("npx", registry.url);
    expect(await versionJson(["npx", "-y", LAUNCHER], env)).toMatchObject({ version: pkg.version, target: HOST });
    const cached = readdirSync(join(home, ".npm", "_npx")).map((h) =>
      join(home, ".npm", "_npx", h, "node_modules", SCOPE),
    );
    expect(cached.flatMap((d) => readdirSync(d))).toEqual([HOST]);
  }, 180_000);

  for (const mode of ["legacy", "auto"] as const)
    test(`npx -y delegate-local serve answers the ${mode === "auto" ? "2026-07-28" : "2025-11-25"} era; dl runs under npm's own process`, async () => {
      const { env } = npmHome(`npx-serve-${mode}`, registry.url);
      const { answer, close } = await eraSession(["npx", "-y", LAUNCHER], env, mode);
      expect(answer.era).toBe(mode === "auto" ? "modern" : "legacy");
      expect(answer.server).toMatchObject({ name: "delegate-local", version: pkg.version });
      // npx stays as the host's child (Node running npm exec), with its shell, and dl below them.
      const tree = descendants(answer.pid!);
      expect(tree.map(exeOfLive).some((exe) => exe?.endsWith(`/${SCOPE}/${HOST}/bin/dl`))).toBe(true);
      await close();
      await waitGone(tree);
    }, 180_000);
});

describe("npm's choice of target", () => {
  const cases: [TargetName, string[]][] = ALL.map((t) => {
    const [os = "", cpu = "", libc] = t.split("-");
    return [t, [`--os=${os}`, `--cpu=${cpu}`, ...(os === "linux" ? [`--libc=${libc ?? "glibc"}`] : [])]];
  });
  for (const [t, flags] of cases)
    test(`npm install -g ${flags.join(" ")} takes ${platformPackage(t)} and no other`, async () => {
      const { prefix, env } = npmHome(`npm-select-${t}`, registry.url);
      const r = await run(["npm", "install", "-g", ...flags, LAUNCHER], env);
      expect(`${r.stderr}exit ${r.code}`).toBe("exit 0");
      expect(installedTargets(prefix)).toEqual([t]);
    }, 180_000);
});

describe.skipIf(process.platform !== "linux" || HOST !== "linux-x64")("linux-arm64 under qemu-user", () => {
  let arm: ReturnType<typeof npmHome>;
  beforeAll(async () => {
    arm = npmHome("npm-arm64", registry.url);
    const r = await run(["npm", "install", "-g", "--os=linux", "--cpu=arm64", "--libc=glibc", LAUNCHER], arm.env);
    if (r.code !== 0) throw new Error(`npm install --cpu=arm64 failed:\n${r.stderr}`);
  }, 180_000);

  test("the package npm chose for arm64 holds a dl that answers --version as linux-arm64", async () => {
    const dl = join(platformDir(arm.prefix, "linux-arm64"), "bin", "dl");
    const qemu = ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", dl];
    expect(await versionJson(qemu, arm.env)).toMatchObject({ version: pkg.version, target: "linux-arm64" });
  }, 120_000);

  test("on this x86-64 machine the launcher refuses the arm64-only install, naming its own target", async () => {
    const r = await run([join(arm.prefix, "bin", "dl"), "--version"], arm.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${HOST}, is not installed`);
  });

  test("as an arm64 machine runs it (binfmt_misc + qemu): the launcher execs the arm64 dl, which answers both eras", async () => {
    const launcher = asArm64([join(arm.prefix, "bin", "dl")], arm.env);
    expect(await versionJson(launcher.cmd, launcher.env)).toMatchObject({ target: "linux-arm64" });
    for (const mode of ["legacy", "auto"] as const) {
      const { answer, close } = await eraSession(launcher.cmd, launcher.env, mode);
      expect(answer.era).toBe(mode === "auto" ? "modern" : "legacy");
      expect(answer.server).toMatchObject({ name: "delegate-local", version: pkg.version });
      await close();
    }
  }, 240_000);
});

describe("no binary fits", () => {
  test.skipIf(process.platform !== "linux")(
    "a machine without a build (setarch i686): the platform and the supported list",
    async () => {
      const { prefix, env } = npmHome("npm-i686", registry.url);
      expect((await run(["npm", "install", "-g", LAUNCHER], env)).code).toBe(0);
      const r = await run(["setarch", "i686", join(prefix, "bin", "dl"), "serve"], env);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`no dl build for Linux i686: dl is built for ${ALL.join(", ")}.`);
    },
    180_000,
  );

  test("a project's npm install --omit=optional: the launcher names the missing package and how to get it", async () => {
    const { env, home } = npmHome("npm-omit", registry.url);
    const project = join(home, "project");
    mkdirSync(project);
    const r = await run(["npm", "install", "--omit=optional", LAUNCHER], env, project);
    expect(`${r.stderr}exit ${r.code}`).toBe("exit 0");
    expect(existsSync(join(project, "node_modules", platformPackage(HOST)))).toBe(false);
    const dl = await run([join(project, "node_modules", ".bin", "dl"), "--version"], env);
    expect(dl.code).toBe(1);
    expect(dl.stdout).toBe("");
    expect(dl.stderr).toContain(`${HOST}, is not installed`);
    expect(dl.stderr).toContain(`${platformPackage(HOST)}@${pkg.version}`);
    expect(dl.stderr).toContain("--include=optional");
  }, 180_000);
});

/** The next patch version after package.json's, for a release published over it. */
function nextPatch(version: string): string {
  const [major = "0", minor = "0", patch = "0"] = version.split("-")[0]!.split(".");
  return `${major}.${minor}.${Number(patch) + 1}`;
}

describe("upgrade and uninstall", () => {
  test("npm install -g delegate-local@latest upgrades launcher and binary together while the old dl serve keeps answering; npm uninstall -g removes both", async () => {
    const { prefix, env } = npmHome("npm-upgrade", registry.url);
    expect((await run(["npm", "install", "-g", LAUNCHER], env)).code).toBe(0);
    const dl = join(prefix, "bin", "dl");
    const { answer, close, client } = await eraSession([dl], env);
    expect(answer.server).toMatchObject({ version: pkg.version });

    const next = nextPatch(pkg.version);
    const release = await hostRelease(next, { npm: true });
    await publish(registry.url, join(release.dir, tarballName(platformPackage(HOST), next)));
    await publish(registry.url, join(release.dir, tarballName(LAUNCHER, next)));
    const up = await run(["npm", "install", "-g", `${LAUNCHER}@latest`], env);
    expect(`${up.stderr}exit ${up.code}`).toBe("exit 0");
    expect(await versionJson([dl], env)).toMatchObject({ version: next, target: HOST });
    expect(installedTargets(prefix)).toEqual([HOST]);
    // The server started before the upgrade runs the file it started from.
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(answer.tools);
    await close();

    const down = await run(["npm", "uninstall", "-g", LAUNCHER], env);
    expect(`${down.stderr}exit ${down.code}`).toBe("exit 0");
    expect(readdirSync(join(prefix, "bin"))).toEqual([]);
    expect(existsSync(join(prefix, "lib", "node_modules", LAUNCHER))).toBe(false);
  }, 300_000);
});

/** A process and everything below it (Linux). */
function descendants(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(descendants)];
}

/** Resolves once none of `pids` is alive. */
async function waitGone(pids: number[]): Promise<void> {
  await until(() => pids.every((p) => !existsSync(`/proc/${p}`)), "npx, its shell and dl to end");
}
