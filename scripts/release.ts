/**
 * `npm run release`: builds dist/release/ from the one build function in build.ts —
 * dl-<version>-<target>.tar.gz for every release target (each holding dl, LICENSE and a
 * short README), the npm tarballs (scripts/release-npm.ts: a package per target around
 * the same binary, and the delegate-local launcher), install.sh, and SHA256SUMS over all
 * of them — then prints each artifact's size. It first writes the version into server.json,
 * the plugin's manifest and the marketplace (scripts/release-metadata.ts). Bun fetches each target's runtime from the npm registry once and keeps
 * it in its install cache, so a second release downloads nothing.
 *
 *   bun scripts/release.ts [--only linux-x64,…] [--out DIR] [--as-version V] [--quick] [--skip-npm]
 *
 * --only, --out, --as-version (a version other than package.json's), --quick (gzip without
 * compression: the same tar.gz format, no CPU spent deflating or inflating 110 MB)
 * and --skip-npm (archives only: install.sh needs no npm tarball, and each takes npm
 * about 10 s of CPU to gzip) let the install tests make a small release of their own.
 */
import { copyFileSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type BuildInfo, buildInfo, TARGETS, type TargetName } from "../build.ts";
import { packTarget } from "./release-archive.ts";
import { syncVersions } from "./release-metadata.ts";
import { packNpm } from "./release-npm.ts";

const root = resolve(import.meta.dir, "..");

function chosenTargets(only: string | undefined): TargetName[] {
  const all = Object.keys(TARGETS) as TargetName[];
  if (!only) return all;
  const asked = only.split(",").map((s) => s.trim());
  const unknown = asked.filter((t) => !all.includes(t as TargetName));
  if (unknown.length) throw new Error(`release: unknown target ${unknown.join(", ")}; targets: ${all.join(", ")}`);
  return asked as TargetName[];
}

async function sha256(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(await Bun.file(path).arrayBuffer());
  return hasher.digest("hex");
}

/** `sha256sum -c` format: the hash, two spaces, the file name. */
async function writeSums(outDir: string, files: string[]): Promise<void> {
  const lines = await Promise.all(files.map(async (f) => `${await sha256(join(outDir, f))}  ${f}\n`));
  await Bun.write(join(outDir, "SHA256SUMS"), lines.join(""));
}

/** Seconds since 1970 of the commit being built, so the archives' entries carry a fixed time. */
function commitTime(): number {
  const r = Bun.spawnSync(["git", "log", "-1", "--format=%ct"], { cwd: root, stderr: "ignore" });
  const t = Number(r.stdout.toString().trim());
  return r.exitCode === 0 && Number.isInteger(t) ? t : 0;
}

const mb = (bytes: number) =>
  bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** One line per artifact: its size, and for an archive the size and target of its dl. */
function report(outDir: string, info: BuildInfo, archives: Map<TargetName, string>, tarballs: string[]): void {
  console.error(`dl ${info.version} (commit ${info.commit}) in ${outDir}:`);
  const size = (f: string) => mb(statSync(join(outDir, f)).size).padStart(9);
  for (const [target, a] of archives) {
    console.error(`  ${a.padEnd(42)} ${size(a)}  (dl ${mb(statSync(stagedBinary(outDir, a)).size)}, ${target})`);
  }
  for (const t of tarballs) console.error(`  ${t.padEnd(42)} ${size(t)}  (npm)`);
}

/** Where packTarget left an archive's dl. */
const stagedBinary = (outDir: string, archive: string) =>
  join(outDir, ".stage", archive.replace(/\.tar\.gz$/, ""), "dl");

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      out: { type: "string" },
      "as-version": { type: "string" },
      quick: { type: "boolean", default: false },
      "skip-npm": { type: "boolean", default: false },
    },
  });
  const targets = chosenTargets(values.only);
  const outDir = resolve(values.out ?? join(root, "dist", "release"));
  const info = { ...buildInfo(), ...(values["as-version"] ? { version: values["as-version"] } : {}) };
  const pack = { mtime: commitTime(), gzipLevel: values.quick ? 0 : 9 } as const;
  const started = performance.now();
  // server.json, the plugin and its marketplace entry name the version being released.
  if (!values["as-version"])
    for (const file of syncVersions(root, info.version))
      console.error(`release: ${file} now names version ${info.version}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const archives = new Map<TargetName, string>();
  for (const target of targets) archives.set(target, await packTarget(outDir, target, info, pack));
  const binaryOf = (t: TargetName) => stagedBinary(outDir, archives.get(t) ?? "");
  const tarballs = values["skip-npm"] ? [] : await packNpm(outDir, join(outDir, ".stage"), targets, info, binaryOf);
  copyFileSync(join(root, "install.sh"), join(outDir, "install.sh"));
  await writeSums(outDir, [...archives.values(), ...tarballs, "install.sh"]);
  report(outDir, info, archives, tarballs);
  rmSync(join(outDir, ".stage"), { recursive: true, force: true });
  console.error(`  SHA256SUMS, install.sh — ${Math.round((performance.now() - started) / 1000)} s`);
}

await main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
