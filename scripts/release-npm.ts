/**
 * The npm tarballs of a release: each target's package around the binary release.ts built,
 * and the launcher, packed by `npm pack` (which gives every entry a fixed time, so the
 * same inputs give the same bytes) into the release folder beside the archives.
 */
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BuildInfo, TargetName } from "../build.ts";
import {
  LAUNCHER,
  launcherManifest,
  launcherReadme,
  platformManifest,
  platformPackage,
  platformReadme,
  tarballName,
} from "./npm-packages.ts";

const root = resolve(import.meta.dir, "..");

/** Write a package folder: package.json, LICENSE, README.md and bin/dl (mode 755). */
function stagePackage(dir: string, manifest: Record<string, unknown>, readme: string, binary: string): void {
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(dir, "README.md"), readme);
  copyFileSync(join(root, "LICENSE"), join(dir, "LICENSE"));
  copyFileSync(binary, join(dir, "bin", "dl"));
  chmodSync(join(dir, "bin", "dl"), 0o755);
}

/** `npm pack` of one staged folder into `outDir`; resolves to the tarball's name. */
async function npmPack(dir: string, outDir: string, name: string, version: string): Promise<string> {
  const p = Bun.spawn(["npm", "pack", "--silent", "--pack-destination", outDir], {
    cwd: dir,
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`release: npm pack failed for ${name}: ${stderr.trim()}`);
  return tarballName(name, version);
}

/**
 * Pack the package of each target (its binary at `binaryOf(target)`) and the launcher into
 * `outDir`, staging them under `stage`. Each `npm pack` gzips one binary on one core, so
 * they run at once. Resolves to the tarballs' names, the launcher's last.
 */
export async function packNpm(
  outDir: string,
  stage: string,
  targets: readonly TargetName[],
  info: BuildInfo,
  binaryOf: (t: TargetName) => string,
): Promise<string[]> {
  const packs = targets.map((t) => {
    const dir = join(stage, "npm", t);
    stagePackage(dir, platformManifest(t, info.version), platformReadme(info, t), binaryOf(t));
    return npmPack(dir, outDir, platformPackage(t), info.version);
  });
  const dir = join(stage, "npm", LAUNCHER);
  const launcher = join(root, "scripts", "npm-launcher.sh");
  stagePackage(dir, launcherManifest(targets, info.version), launcherReadme(info, targets), launcher);
  packs.push(npmPack(dir, outDir, LAUNCHER, info.version));
  return Promise.all(packs);
}
