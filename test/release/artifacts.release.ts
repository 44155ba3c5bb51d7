/**
 * `npm run test:release`: every artifact in dist/release is checked before it is
 * trusted. SHA256SUMS matches each file; each archive holds only dl, LICENSE and README,
 * and dl's embedded code holds no test fixture or dev dependency; the glibc Linux builds
 * run here (linux-arm64 under qemu-user) and answer --version, MCP initialize + tools/list
 * over stdio and `dl status --json` in an empty HOME; the musl builds are read as ELF and
 * the macOS builds as Mach-O; install.sh --from dist/release installs a working dl.
 *
 * Not a *.test.ts file: it needs `npm run release` first, which `npm run test:release` does.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { TARGETS, type TargetName } from "../../build.ts";
import pkg from "../../package.json" with { type: "json" };
import { LAUNCHER, platformPackage, tarballName } from "../../scripts/npm-packages.ts";
import { archiveName } from "../../scripts/release-archive.ts";
import { tempDir } from "../helpers/dl.ts";
import { EM_AARCH64, EM_X86_64, readAt, readElf } from "./elf.ts";
import { freshHome, HOST, install, ROOT, run, SYSTEM_PATH, unpack } from "./helpers.ts";
import {
  CPU_TYPE_ARM64,
  CPU_TYPE_X86_64,
  CSMAGIC_EMBEDDED_SIGNATURE,
  MH_EXECUTE,
  MH_MAGIC_64,
  readMachO,
} from "./macho.ts";

const DIR = join(ROOT, "dist", "release");
const ALL = Object.keys(TARGETS) as TargetName[];
const archivePath = (t: TargetName) => join(DIR, archiveName(pkg.version, t));

let sums: Map<string, string>;
/** Each target's dl, unpacked once from its archive. */
const unpacked = new Map<TargetName, string>();
const binary = (t: TargetName) => unpacked.get(t) ?? "";
beforeAll(async () => {
  if (!existsSync(join(DIR, "SHA256SUMS"))) throw new Error(`${DIR}/SHA256SUMS is missing: run npm run test:release`);
  sums = new Map(
    readFileSync(join(DIR, "SHA256SUMS"), "utf8")
      .trim()
      .split("\n")
      .map((l) => {
        const [hash = "", name = ""] = l.split("  ");
        return [name, hash];
      }),
  );
  for (const t of ALL) unpacked.set(t, await unpack(archivePath(t)));
}, 300_000);

describe("SHA256SUMS and archive contents", () => {
  test("SHA256SUMS lists every artifact and matches each one", async () => {
    const tarballs = [...ALL.map(platformPackage), LAUNCHER].map((n) => tarballName(n, pkg.version));
    expect([...sums.keys()].sort()).toEqual(
      [...ALL.map((t) => archiveName(pkg.version, t)), ...tarballs, "install.sh"].sort(),
    );
    expect(readdirSync(DIR).sort()).toEqual([...sums.keys(), "SHA256SUMS"].sort());
    for (const [name, hash] of sums) {
      const hasher = new Bun.CryptoHasher("sha256");
      hasher.update(await Bun.file(join(DIR, name)).arrayBuffer());
      expect(`${name} ${hasher.digest("hex")}`).toBe(`${name} ${hash}`);
    }
  });

  test("each archive holds dl (executable), LICENSE, a README naming the install steps, and the examples/ the README names", async () => {
    const examples = (readdirSync(join(ROOT, "examples"), { recursive: true }) as string[]).map((f) =>
      statSync(join(ROOT, "examples", f)).isDirectory() ? `examples/${f}/` : `examples/${f}`,
    );
    for (const t of ALL) {
      const folder = archiveName(pkg.version, t).replace(/\.tar\.gz$/, "");
      const list = await run(["tar", "-tvzf", archivePath(t)], { PATH: SYSTEM_PATH });
      const entries = list.stdout.trim().split("\n");
      const own = ["", "LICENSE", "README", "dl", "examples/", ...examples].map((f) => `${folder}/${f}`);
      expect(entries.map((l) => l.split(/\s+/).pop()).sort()).toEqual(own.sort());
      expect(entries.find((l) => l.endsWith("/dl"))).toStartWith("-rwxr-xr-x 0/0");
      const dl = binary(t);
      const readme = readFileSync(join(dl, "..", "README"), "utf8");
      expect(readme).toContain("sh install.sh --from .");
      // The same next steps as the README and install.sh: dl init, and the one registration line.
      expect(readme).toContain("  dl init\n  claude mcp add delegate-local --scope user -- ~/.local/bin/dl serve\n");
      expect(readme).not.toContain("--env");
      expect(readme).toContain(`dl ${pkg.version} for ${t}`);
      if (t.endsWith("-musl")) expect(readme).toContain("apk add libstdc++ libgcc");
      expect(readFileSync(join(dl, "..", "LICENSE"), "utf8")).toContain("MIT License");
    }
  });
});

/** An npm tarball unpacked once: the path of its `package/` folder. */
async function unpackTarball(tgz: string): Promise<string> {
  const out = tempDir("tgz");
  const r = await run(["tar", "-xzf", tgz, "-C", out], { PATH: SYSTEM_PATH });
  if (r.code !== 0) throw new Error(`tar -xzf ${tgz}: ${r.stderr}`);
  return join(out, "package");
}

const sha = (b: Buffer) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

describe("npm tarballs", () => {
  test("each target's package holds that archive's dl (mode 755), LICENSE, README.md and a package.json npm selects by os/cpu/libc", async () => {
    for (const t of ALL) {
      const tgz = join(DIR, tarballName(platformPackage(t), pkg.version));
      const list = await run(["tar", "-tvzf", tgz], { PATH: SYSTEM_PATH });
      const entries = list.stdout.trim().split("\n");
      expect(entries.map((l) => l.split(/\s+/).pop()).sort()).toEqual(
        ["package/LICENSE", "package/README.md", "package/bin/dl", "package/package.json"].sort(),
      );
      expect(entries.find((l) => l.endsWith("/bin/dl"))).toStartWith("-rwxr-xr-x");
      const unpacked = await unpackTarball(tgz);
      expect(sha(readFileSync(join(unpacked, "bin", "dl")))).toBe(sha(readFileSync(binary(t))));
      const manifest = JSON.parse(readFileSync(join(unpacked, "package.json"), "utf8"));
      const [os, cpu, libc] = t.split("-");
      expect(manifest).toMatchObject({ name: platformPackage(t), version: pkg.version, os: [os], cpu: [cpu] });
      expect(manifest.libc).toEqual(os === "linux" ? [libc ?? "glibc"] : undefined);
      expect(manifest.bin).toBeUndefined();
    }
  });

  test("the launcher holds scripts/npm-launcher.sh as bin/dl, the commands, mcpName and every target at its own version", async () => {
    const tgz = join(DIR, tarballName(LAUNCHER, pkg.version));
    const unpacked = await unpackTarball(tgz);
    expect(readFileSync(join(unpacked, "bin", "dl"), "utf8")).toBe(
      readFileSync(join(ROOT, "scripts", "npm-launcher.sh"), "utf8"),
    );
    const manifest = JSON.parse(readFileSync(join(unpacked, "package.json"), "utf8"));
    expect(manifest.bin).toEqual({ dl: "bin/dl", "delegate-wait": "bin/dl", [LAUNCHER]: "bin/dl" });
    expect(manifest.optionalDependencies).toEqual(
      Object.fromEntries(ALL.map((t) => [platformPackage(t), pkg.version])),
    );
    expect(manifest.mcpName).toBe(JSON.parse(readFileSync(join(ROOT, "server.json"), "utf8")).name);
    expect(manifest.scripts).toBeUndefined();
  });
});

/** dl's own code inside a binary: the `.bun` section of an ELF file, the `__BUN` segment of a Mach-O one. */
function embeddedCode(t: TargetName, dl: string): Buffer {
  const where = t.startsWith("darwin") ? readMachO(dl).segments.get("__BUN") : readElf(dl).sections.get(".bun");
  if (!where) throw new Error(`${t}: no embedded code found in ${dl}`);
  const fd = openSync(dl, "r");
  try {
    return readAt(fd, where.offset, where.size);
  } finally {
    closeSync(fd);
  }
}

/** Text that only the test suite or a dev dependency has: none of it may ship. */
function forbiddenMarkers(): string[] {
  const fixtures = readdirSync(join(ROOT, "test", "fixture"))
    .map((f) => f.replace(/\.[a-z]+$/, ""))
    .filter((f) => f.includes("-"));
  // bun:test (every test file), the suite's root variable, Biome, knip, TypeScript, the Codex CLI's npm launcher.
  return [
    ...fixtures,
    "bun:test",
    "DL_TEST_ROOT",
    "@biomejs/biome",
    "knip",
    "typescript",
    "PLATFORM_PACKAGE_BY_TARGET",
  ];
}

describe("what the binaries embed", () => {
  test("dl's embedded code holds no test fixture or dev dependency", async () => {
    const markers = forbiddenMarkers();
    expect(markers).toContain("fake-model");
    for (const t of ALL) {
      const dl = binary(t);
      const code = embeddedCode(t, dl);
      // The reader found dl's code: its server name and a setting are there.
      expect(code.includes("delegate-local")).toBe(true);
      expect(code.includes("DELEGATE_LOCAL_URL")).toBe(true);
      expect(code.length).toBeLessThan(16 * 1024 * 1024);
      expect(markers.filter((m) => code.includes(m)).map((m) => `${t}: ${m}`)).toEqual([]);
    }
  });
});

describe("binary headers", () => {
  const ELF: [TargetName, number, string][] = [
    ["linux-x64", EM_X86_64, "/lib64/ld-linux-x86-64.so.2"],
    ["linux-arm64", EM_AARCH64, "/lib/ld-linux-aarch64.so.1"],
    ["linux-x64-musl", EM_X86_64, "/lib/ld-musl-x86_64.so.1"],
    ["linux-arm64-musl", EM_AARCH64, "/lib/ld-musl-aarch64.so.1"],
  ];
  test("the readers tell the formats apart: a Mach-O file is no ELF file, an ELF file has no Mach-O magic", () => {
    expect(() => readElf(binary("darwin-arm64"))).toThrow("not an ELF file");
    expect(readMachO(binary("linux-arm64-musl")).magic).not.toBe(MH_MAGIC_64);
    expect(readElf(binary("linux-x64")).interpreter).not.toBe(readElf(binary("linux-x64-musl")).interpreter);
  });

  for (const [t, machine, loader] of ELF)
    test(`${t}: ELF for machine ${machine}, executable, PT_INTERP ${loader}`, async () => {
      const dl = binary(t);
      const elf = readElf(dl);
      expect({ machine: elf.machine, type: elf.type, interpreter: elf.interpreter }).toEqual({
        machine,
        type: 2,
        interpreter: loader,
      });
    });

  const MACHO: [TargetName, number][] = [
    ["darwin-x64", CPU_TYPE_X86_64],
    ["darwin-arm64", CPU_TYPE_ARM64],
  ];
  for (const [t, cpuType] of MACHO)
    test(`${t}: 64-bit Mach-O executable for CPU ${cpuType.toString(16)} with an embedded code signature`, async () => {
      const dl = binary(t);
      const m = readMachO(dl);
      expect({ magic: m.magic, cpuType: m.cpuType, fileType: m.fileType }).toEqual({
        magic: MH_MAGIC_64,
        cpuType,
        fileType: MH_EXECUTE,
      });
      expect(m.signature?.magic).toBe(CSMAGIC_EMBEDDED_SIGNATURE);
      // The signature is the last thing in the file, as codesign lays it out.
      expect(m.signature!.offset + m.signature!.size).toBeLessThanOrEqual(statSync(dl).size);
      expect(m.signature!.offset).toBeGreaterThan(statSync(dl).size - m.signature!.size - 16 * 1024);
    });
});

/** How to run a Linux build here: natively on its own CPU, under qemu-user on the other one. */
function runner(t: "linux-x64" | "linux-arm64"): string[] {
  if (t === HOST) return [];
  return t === "linux-arm64"
    ? ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu"]
    : ["qemu-x86_64-static", "-L", "/usr/x86_64-linux-gnu"];
}

type Answers = { version: string; info: { version: string; commit: string; target: string }; tools: unknown[] };
const answers = new Map<string, Answers>();

describe.skipIf(process.platform !== "linux")("the glibc Linux builds run", () => {
  for (const t of ["linux-x64", "linux-arm64"] as const)
    test(`${t}${runner(t).length ? " (under qemu-user)" : ""}: --version, MCP initialize + tools/list, dl status --json in an empty HOME`, async () => {
      const dl = binary(t);
      const cmd = [...runner(t), dl];
      const { home, env } = freshHome("empty-home");
      const v = await run([...cmd, "--version"], env);
      const j = await run([...cmd, "--version", "--json"], env);
      expect(v.code).toBe(0);
      const info = JSON.parse(j.stdout) as { version: string; commit: string; target: string };
      expect(info).toEqual({
        version: pkg.version,
        commit: expect.stringMatching(/^[0-9a-f]{12}(-dirty)?$/),
        target: t,
      });
      expect(v.stdout).toBe(`dl ${pkg.version} (commit ${info.commit}, ${t})\n`);

      const transport = new StdioClientTransport({
        command: cmd[0]!,
        args: [...cmd.slice(1), "serve"],
        env,
        stderr: "ignore",
      });
      const client = new Client({ name: "dl-release-test", version: "1" });
      await client.connect(transport);
      const tools = (await client.listTools()).tools;
      expect(client.getServerVersion()).toMatchObject({ name: "delegate-local", version: pkg.version });
      await client.close();
      expect(tools.map((x) => x.name)).toContain("list_local_agents");

      const empty = freshHome("empty-home");
      const status = await run([...cmd, "status", "--json"], empty.env);
      // Reporting creates nothing: the HOME is still empty afterwards.
      expect(readdirSync(empty.home)).toEqual([]);
      // No gateway listens here, so the report is unhealthy (exit 1) — but it is a report.
      expect(status.code).toBe(1);
      const report = JSON.parse(status.stdout) as Record<string, unknown>;
      expect({ version: report.version, commit: report.commit, target: report.target }).toEqual(info);
      answers.set(t, { version: v.stdout, info, tools });
      rmSync(home, { recursive: true });
    }, 180_000);

  test("both builds come from one commit and list the same tools", () => {
    const [x64, arm64] = [answers.get("linux-x64"), answers.get("linux-arm64")];
    expect(x64 && arm64).toBeTruthy();
    expect(arm64!.info.commit).toBe(x64!.info.commit);
    expect(arm64!.tools).toEqual(x64!.tools);
  });
});

describe.skipIf(!(process.platform === "linux" || process.platform === "darwin"))(
  "install.sh from dist/release",
  () => {
    test("puts a working dl for this machine into ~/.local/bin of a fresh HOME", async () => {
      const { home, env } = freshHome("home");
      const r = await install(["--from", DIR], env);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const dl = join(home, ".local", "bin", "dl");
      expect(r.stdout).toContain(` -- ${dl} serve\n`);
      const v = await run([dl, "--version", "--json"], env);
      expect(JSON.parse(v.stdout)).toMatchObject({ version: pkg.version, target: HOST });
    }, 120_000);
  },
);
