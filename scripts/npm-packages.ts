/**
 * What the npm packages of a release are: the launcher package `delegate-local` (its
 * commands `dl`, `delegate-wait` and `delegate-local` are scripts/npm-launcher.sh) and one
 * package per release target, `@delegate-local/<target>`, holding that target's dl and
 * selected by npm through its `os`, `cpu` and `libc` fields (the esbuild and Biome
 * pattern). The launcher lists every target package as an optional dependency at its own
 * version, so npm installs the one that fits this machine and skips the others.
 *
 * The launcher needs no install script (npm warns about them and pnpm and Bun skip them
 * by default) and no Node.js at run time: it finds the binary and execs it.
 */
import type { BuildInfo, TargetName } from "../build.ts";

/** The package a user installs: `npm i -g delegate-local`, `npx -y delegate-local serve`. */
export const LAUNCHER = "delegate-local";
/** The scope of the per-target packages. */
export const SCOPE = "@delegate-local";
/** The MCP Registry's name for dl (server.json `name`, the launcher's `mcpName`). */
export const MCP_NAME = "io.github.delegate-local/dl";

export const platformPackage = (target: TargetName) => `${SCOPE}/${target}`;

/** The file `npm pack` writes for a package: `@scope/name` becomes `scope-name`. */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`;
}

type Selector = { os: string[]; cpu: string[]; libc?: string[] };

/** npm's names for where a target runs: os is process.platform, cpu process.arch. */
export function selector(target: TargetName): Selector {
  const [os = "", cpu = "", libc] = target.split("-");
  return os === "linux"
    ? { os: [os], cpu: [cpu], libc: [libc === "musl" ? "musl" : "glibc"] }
    : { os: [os], cpu: [cpu] };
}

const COMMON = { license: "MIT", author: "the dl authors" } as const;

/** package.json of one target's package: the binary at bin/dl, and nothing npm would link. */
export function platformManifest(target: TargetName, version: string): Record<string, unknown> {
  return {
    name: platformPackage(target),
    version,
    description: `The dl binary for ${target}, installed by the ${LAUNCHER} package; install that one instead.`,
    ...COMMON,
    ...selector(target),
    files: ["bin/dl", "LICENSE", "README.md"],
    preferUnplugged: true,
  };
}

/** package.json of the launcher: its commands, the MCP Registry name, and every target as an optional dependency. */
export function launcherManifest(targets: readonly TargetName[], version: string): Record<string, unknown> {
  return {
    name: LAUNCHER,
    version,
    description:
      "dl: hand Claude Code sub-agent work to other model backends and coding CLIs (MCP server and command line).",
    ...COMMON,
    keywords: ["mcp", "mcp-server", "claude-code", "codex", "gemini", "llm", "agents"],
    mcpName: MCP_NAME,
    bin: { dl: "bin/dl", "delegate-wait": "bin/dl", [LAUNCHER]: "bin/dl" },
    files: ["bin/dl", "LICENSE", "README.md"],
    optionalDependencies: Object.fromEntries(targets.map((t) => [platformPackage(t), version])),
  };
}

/** The README npm shows for the launcher. */
export function launcherReadme(info: BuildInfo, targets: readonly TargetName[]): string {
  return `# ${LAUNCHER}

dl ${info.version}: one executable that lets a Claude Code session hand sub-agent work to
other model backends and coding CLIs. \`dl serve\` is its MCP server; \`dl status\`,
\`dl wait\`, \`dl jobs\`, \`dl usage\` and the others are its command line.

    npm install -g ${LAUNCHER}                         # dl, delegate-wait on PATH
    claude mcp add delegate-local --scope user -- npx -y ${LAUNCHER} serve   # or: -- "$(command -v dl)" serve

This package holds no program of its own: npm installs the dl binary for this machine
as the optional dependency ${SCOPE}/<target> (${targets.join(", ")}), and the \`dl\`
command execs it, so no Node.js process stays between the host and dl. Where no build
fits, \`dl\` says so and names the supported platforms; install.sh installs a release
archive instead. Documentation: the README and docs/INSTALL.md of the dl repository.

License: MIT.
`;
}

/** The README npm shows for one target's package. */
export function platformReadme(info: BuildInfo, target: TargetName): string {
  const musl = target.endsWith("-musl") ? "\nOn Alpine, dl needs the C++ runtime: apk add libstdc++ libgcc\n" : "";
  return `# ${platformPackage(target)}

The dl ${info.version} binary for ${target} (commit ${info.commit}), at bin/dl. Install
the ${LAUNCHER} package instead: it depends on this one where it fits and runs it.
${musl}
License: MIT.
`;
}
