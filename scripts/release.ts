/**
 * `npm run release`: builds dist/release/ from the one build function in build.ts —
 * dl-<version>-<target>.tar.gz for every release target (each holding dl, LICENSE and a
 * short README), install.sh, and SHA256SUMS over all of them — then prints each
 * artifact's size. Bun fetches each target's runtime from the npm registry once and keeps
 * it in its install cache, so a second release downloads nothing.
 *
 *   bun scripts/release.ts [--only linux-x64,…] [--out DIR] [--as-version V] [--quick]
 *
 * --only, --out, --as-version (a version other than package.json's) and --quick (fast
 * gzip) let the install tests make a small release of their own.
 */
import { copyFileSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildInfo, TARGETS, type TargetName } from "../build.ts";
import { packTarget } from "./release-archive.ts";

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

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      out: { type: "string" },
      "as-version": { type: "string" },
      quick: { type: "boolean", default: false },
    },
  });
  const targets = chosenTargets(values.only);
  const outDir = resolve(values.out ?? join(root, "dist", "release"));
  const info = { ...buildInfo(), ...(values["as-version"] ? { version: values["as-version"] } : {}) };
  const pack = { mtime: commitTime(), gzipLevel: values.quick ? 1 : 9 } as const;
  const started = performance.now();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const archives: string[] = [];
  for (const target of targets) archives.push(await packTarget(outDir, target, info, pack));
  copyFileSync(join(root, "install.sh"), join(outDir, "install.sh"));
  await writeSums(outDir, [...archives, "install.sh"]);
  console.error(`dl ${info.version} (commit ${info.commit}) in ${outDir}:`);
  for (const [i, a] of archives.entries()) {
    const binary = statSync(join(outDir, ".stage", a.replace(/\.tar\.gz$/, ""), "dl")).size;
    console.error(
      `  ${a.padEnd(36)} ${mb(statSync(join(outDir, a)).size).padStart(9)}  (dl ${mb(binary)}, ${targets[i]})`,
    );
  }
  rmSync(join(outDir, ".stage"), { recursive: true, force: true });
  console.error(`  SHA256SUMS, install.sh — ${Math.round((performance.now() - started) / 1000)} s`);
}

await main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
