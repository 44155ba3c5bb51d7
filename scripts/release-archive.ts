/**
 * The parts of one release archive: its name, the short README it carries, and the
 * tar.gz itself. install.sh finds an archive by this name, so the two must agree.
 */
import { copyFileSync, cpSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type BuildInfo, buildDl, type TargetName } from "../build.ts";

const root = resolve(import.meta.dir, "..");

export function archiveName(version: string, target: TargetName): string {
  return `dl-${version}-${target}.tar.gz`;
}

const MUSL_NOTE = `
This build is for musl-based Linux (Alpine). It needs the C++ runtime, which Alpine
ships separately:

  apk add libstdc++ libgcc
`;

/** The README inside an archive: what dl is, the install steps (the README's), and what else the archive holds. */
export function archiveReadme(info: BuildInfo, target: TargetName): string {
  return `dl ${info.version} for ${target} (commit ${info.commit})

dl is one executable: an MCP server (dl serve) that lets Claude Code hand sub-agent
work to other model backends and coding CLIs, and its command line: dl init, dl status,
dl run, dl wait, dl jobs, dl show, dl logs, dl cancel, dl usage, dl reap (dl help lists
them). Documentation: the README of the dl repository.

Install (from the folder holding this release's archives, SHA256SUMS and install.sh):

  sh install.sh --from .

install.sh picks the archive for this machine, checks it against SHA256SUMS and installs
dl into ~/.local/bin (--prefix DIR for another place). By hand: check the archive,
unpack it, move dl onto your PATH:

  sha256sum -c --ignore-missing SHA256SUMS     (macOS: shasum -a 256 -c --ignore-missing SHA256SUMS)
  tar -xzf ${archiveName(info.version, target)}
  mkdir -p ~/.local/bin && mv dl-${info.version}-${target}/dl ~/.local/bin/dl
  export PATH="$HOME/.local/bin:$PATH"         (once, in your shell's profile)

Then find your model server and write the settings every dl process reads
(~/.config/dl/settings.env), and register dl with Claude Code once:

  dl init
  claude mcp add delegate-local --scope user -- ~/.local/bin/dl serve

examples/ holds the files the README names: agents (examples/agents/), a LiteLLM and a
Bifrost config, claude-glm.sh, and each host's registration (examples/hosts/).
${target.endsWith("-musl") ? MUSL_NOTE : ""}
License: MIT (see LICENSE).
`;
}

/** GNU tar can drop the builder's user, group and file times; bsdtar (macOS) the owner only. */
function tarFlags(mtime: number): string[] {
  const version = Bun.spawnSync(["tar", "--version"], { stderr: "ignore" }).stdout.toString();
  if (!version.includes("GNU tar")) return ["--uid", "0", "--gid", "0"];
  return ["--sort=name", "--owner=0", "--group=0", "--numeric-owner", `--mtime=@${mtime}`, "--format=ustar"];
}

/**
 * Pack `folder` (inside `parent`) as `outfile`. tar keeps dl's executable bit, which
 * Bun.Archive's object form cannot express; Bun's gzip writes no name or time into the
 * header, so the same inputs give the same bytes.
 */
function writeTarGz(parent: string, folder: string, outfile: string, pack: PackOptions): void {
  const tar = Bun.spawnSync(["tar", ...tarFlags(pack.mtime), "-C", parent, "-cf", "-", folder], {
    stderr: "pipe",
    maxBuffer: 512 * 1024 * 1024,
  });
  if (tar.exitCode !== 0) throw new Error(`release: tar failed for ${folder}: ${tar.stderr.toString().trim()}`);
  writeFileSync(outfile, Bun.gzipSync(new Uint8Array(tar.stdout), { level: pack.gzipLevel }));
}

/** Entry times (seconds since 1970) and gzip level of the archives. */
export type PackOptions = { mtime: number; gzipLevel: 0 | 9 };

/**
 * Build one target into `<outDir>/.stage/<folder>/` with its LICENSE, README and examples/, and pack
 * that folder as `<outDir>/<archive>`. Returns the archive's file name.
 */
export async function packTarget(
  outDir: string,
  target: TargetName,
  info: BuildInfo,
  pack: PackOptions,
): Promise<string> {
  const name = archiveName(info.version, target);
  const folder = name.replace(/\.tar\.gz$/, "");
  const stage = join(outDir, ".stage", folder);
  await buildDl(target, join(stage, "dl"), info);
  copyFileSync(join(root, "LICENSE"), join(stage, "LICENSE"));
  // The examples the README names travel with the binary: a release install has no checkout.
  // examples/agents links to the plugin's agents (plugin/agents): the archive gets the files.
  cpSync(join(root, "examples"), join(stage, "examples"), { recursive: true, dereference: true });
  await Bun.write(join(stage, "README"), archiveReadme(info, target));
  writeTarGz(join(outDir, ".stage"), folder, join(outDir, name), pack);
  return name;
}
