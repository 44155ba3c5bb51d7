import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { claudeStateFile } from "../sys/claude-home-reads.ts";
import { isFolder } from "../sys/file-head.ts";
import { canonicalPath, isWithin } from "../sys/paths.ts";
import { type NamedByConfig, type NamedOptions, namedByText, namedByToolConfig } from "./config-named.ts";
import { linkedIntoTree, type PathDir } from "./config-programs.ts";

/**
 * Claude Code's configurations that live outside the work tree but run commands in it,
 * with the project as their folder (read from the real CLI's behaviour, 2.1.332), in its
 * configuration folder (CLAUDE_CONFIG_DIR, else `~/.claude`):
 * - the user's settings (`settings.json`) and the administrator's managed ones
 *   (`managed-settings.json`, its drop-ins, `managed-mcp.json`): their hooks, status line
 *   and helpers run in every project (`npx -y ccusage statusline` runs a
 *   `node_modules/.bin/ccusage` the project has);
 * - the user's own agents, skills and commands: hooks in their front matter;
 * - the MCP servers of `.claude.json`: the user's (top-level `mcpServers`) start in every
 *   project, a local one (`projects[<folder>].mcpServers`, what `claude mcp add` writes by
 *   default) in that folder;
 * - the installed plugins' hooks, MCP and LSP servers, monitors (pluginConfigFiles);
 * - for a linked worktree, the main checkout's `.claude/settings.local.json`: Claude Code
 *   reads local settings from the repository's canonical root, and runs their hooks in
 *   the worktree.
 * The files these run in the work tree are kept read-only as a protected configuration's are.
 */

/** Where the host may run them: the workdir, the folders holding it that count, and the repository's roots. */
export interface HostPlaces {
  workdir: string;
  /** The caller's project or the repository that holds the workdir (config-named.ts aboveTop). */
  top: string | null;
  /** The work tree root of the repository the workdir is in. */
  toplevel: string | null;
  /** The repository's main checkout when the workdir is in a linked worktree of it (mainCheckout). */
  mainRoot: string | null;
  home?: string;
  /** Claude Code's configuration folder (CLAUDE_CONFIG_DIR, else ~/.claude: claude-home-reads.ts claudeDirOf). */
  claudeDir?: string;
  /** Where the administrator's managed settings are (MANAGED_DIR; a test's own folder). */
  managedDir?: string;
}

/** Claude Code's managed settings: `managed-settings.json` and the `managed-settings.d/*.json` drop-ins. */
const MANAGED_DIR = process.platform === "darwin" ? "/Library/Application Support/ClaudeCode" : "/etc/claude-code";

interface HostConfig {
  file: string;
  /** The JSON to read in place of the file (the part of ~/.claude.json that is this project's); absent: the file is read. */
  json?: string;
  project: string;
}

/** ~/.claude.json holds every project's history: read whole up to this, else not at all. */
const MAX_STATE_BYTES = 64 << 20;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A regular file's JSON object (never a FIFO), or null. Links are followed, as Claude Code
 * follows them: home-manager, stow and chezmoi make `~/.claude/settings.json` one; where
 * one leads into the tree, what it reaches there is kept as configuration (linkedIntoTree).
 */
function readJson(path: string): Json | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_STATE_BYTES) return null;
    const v: unknown = JSON.parse(readFileSync(fd, "utf8"));
    return isObject(v) ? v : null;
  } catch {
    return null; // absent, unreadable or not JSON: Claude Code reads nothing from it either
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The main checkout of a linked worktree: the folder holding its common `.git` dir; null for the main one itself. */
export function mainCheckout(facts: { gitDir: string; commonDir: string } | undefined): string | null {
  if (!facts || facts.gitDir === facts.commonDir || basename(facts.commonDir) !== ".git") return null;
  return dirname(facts.commonDir);
}

const distinct = (dirs: (string | null)[]) => [...new Set(dirs.filter((d): d is string => d !== null))];

/** The configurations (with the folder each runs in) that Claude Code brings to a session in this project. */
function hostConfigs(p: HostPlaces): HostConfig[] {
  const everywhere = distinct([p.workdir, p.top, p.toplevel]);
  const out: HostConfig[] = [];
  for (const file of settingsFiles(p)) {
    const settings = readJson(file);
    if (settings) for (const project of everywhere) out.push({ file, json: JSON.stringify(settings), project });
  }
  const dir = claudeDir(p);
  if (!dir) return out;
  const stateFile = claudeStateFile(dir, p.home);
  const state = readJson(stateFile);
  if (isObject(state?.mcpServers))
    for (const project of everywhere)
      out.push({ file: stateFile, json: JSON.stringify({ mcpServers: state.mcpServers }), project });
  for (const [key, entry] of Object.entries(isObject(state?.projects) ? state.projects : {})) {
    if (!isObject(entry) || !isObject(entry.mcpServers)) continue;
    const project = localProject(canonicalPath(key), p);
    if (project) out.push({ file: stateFile, json: JSON.stringify({ mcpServers: entry.mcpServers }), project });
  }
  for (const file of [...pluginConfigFiles(dir), ...ownComponents(dir)])
    for (const project of everywhere) out.push({ file, project });
  if (p.mainRoot && p.mainRoot !== p.toplevel) {
    const local = join(p.mainRoot, ".claude", "settings.local.json");
    const json = readJson(local);
    if (json)
      for (const project of distinct([p.toplevel, p.workdir]))
        out.push({ file: local, json: JSON.stringify(json), project });
  }
  return out;
}

/** The settings files whose commands run in every project: the administrator's managed ones and the user's. */
function settingsFiles(p: HostPlaces): string[] {
  const managed = p.managedDir ?? MANAGED_DIR;
  let dropIns: string[] = [];
  try {
    dropIns = readdirSync(join(managed, "managed-settings.d")).filter((n) => n.endsWith(".json"));
  } catch {
    // none: Claude Code reads none either
  }
  return [
    join(managed, "managed-settings.json"),
    ...dropIns.map((n) => join(managed, "managed-settings.d", n)),
    join(managed, "managed-mcp.json"),
    ...(claudeDir(p) ? [join(claudeDir(p)!, "settings.json")] : []),
  ];
}

/** A plugin's files Claude Code reads whatever its plugin.json says: hooks, MCP, LSP servers and monitors (which run unsandboxed, as hooks do). */
const PLUGIN_FILES = [
  ".claude-plugin/plugin.json",
  "hooks/hooks.json",
  ".mcp.json",
  ".lsp.json",
  "monitors/monitors.json",
];
/** plugin.json's keys whose value may be a path (or paths) to more of those, or to agents, skills and commands. */
const PLUGIN_KEYS = ["hooks", "mcpServers", "lspServers", "monitors", "agents", "skills", "commands"];

/**
 * The files of the installed plugins (`plugins/installed_plugins.json`, every scope:
 * which project enabled one is not asked) whose commands Claude Code runs in the project:
 * hooks, MCP and LSP servers, monitors, and the hooks of its agents', skills' and
 * commands' front matter, where plugin.json puts them too. Its own scripts run from its
 * folder, outside the tree: they are not read.
 */
function pluginConfigFiles(dir: string): string[] {
  const installed = readJson(join(dir, "plugins", "installed_plugins.json"));
  const roots = Object.values(isObject(installed?.plugins) ? installed.plugins : {}).flatMap((list) =>
    (Array.isArray(list) ? list : []).flatMap((i) =>
      isObject(i) && typeof i.installPath === "string" && isAbsolute(i.installPath) ? [i.installPath] : [],
    ),
  );
  return [...new Set(roots)].flatMap((root) => {
    const manifest = readJson(join(root, ".claude-plugin", "plugin.json"));
    const experimental = isObject(manifest?.experimental) ? manifest.experimental : {};
    const named = [...PLUGIN_KEYS.map((k) => manifest?.[k]), experimental.monitors].flatMap((v) =>
      Array.isArray(v) ? v : [v],
    );
    const paths = named.filter((v): v is string => typeof v === "string").map((v) => resolve(root, v));
    return [
      ...PLUGIN_FILES.map((f) => join(root, f)),
      ...paths.filter((f) => isWithin(f, root)).flatMap(componentFiles),
      ...ownComponents(root),
    ];
  });
}

/** The agents, skills and commands of a configuration folder (the user's, a plugin's): their front matter may hold hooks. */
function ownComponents(dir: string): string[] {
  return ["agents", "skills", "commands"].flatMap((c) => componentFiles(join(dir, c)));
}

/** A component path: a file as it is; a folder's markdown files, its subfolders' too (a skill's SKILL.md, namespaced commands). */
function componentFiles(path: string): string[] {
  if (!isFolder(path)) return [path];
  const md = (d: string) => filesIn(d, (n) => n.endsWith(".md"));
  return [...md(path), ...filesIn(path, () => true).flatMap((d) => (isFolder(d) ? md(d) : []))];
}

/** The entries of a folder that pass `ok`, as paths; none when it cannot be read. */
function filesIn(dir: string, ok: (name: string) => boolean): string[] {
  try {
    return readdirSync(dir)
      .filter(ok)
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** Claude Code's configuration folder: as dl's settings found it, else `~/.claude`. */
const claudeDir = (p: HostPlaces) => p.claudeDir ?? (p.home ? join(p.home, ".claude") : undefined);

/** Where a `projects` entry of ~/.claude.json runs: its own folder when it holds the workdir or lies in it; the worktree for the main checkout's. */
function localProject(key: string, p: HostPlaces): string | null {
  if (isWithin(p.workdir, key) || isWithin(key, p.workdir)) return key;
  return key === p.mainRoot ? (p.toplevel ?? p.workdir) : null;
}

/** What those configurations run of the work tree, merged as the tree guard and the write tools use it. */
export interface HostNamed {
  /** Files and folders inside the workdir (never the workdir itself). */
  files: string[];
  workdirOnPath: PathDir[];
  npmScripts: NamedByConfig["npmScripts"];
  manifestKeys: NamedByConfig["manifestKeys"];
  importRoots: string[];
  pythons: string[];
  pyNames: string[];
  wideScripts: string[];
}

export function namedByHost(p: HostPlaces, ignored: (abs: string) => boolean): HostNamed {
  const o: NamedOptions = { workdir: p.workdir, ignored, home: p.home };
  const configs = hostConfigs(p);
  const all = configs.map((c) =>
    c.json === undefined ? namedByToolConfig(c.file, o, c.project) : namedByText(c.file, c.json, o, c.project),
  );
  const inTree = (f: string) => f !== p.workdir && isWithin(f, p.workdir);
  const linked = configs.flatMap((c) => linkedIntoTree(c.file, p.workdir));
  return {
    files: [...new Set([...all.flatMap((n) => n.files), ...linked].filter(inTree))],
    workdirOnPath: all.flatMap((n) => n.pathDirs.filter((d) => d.dir === p.workdir)),
    npmScripts: all.flatMap((n) => n.npmScripts).filter((s) => inTree(s.pkg)),
    manifestKeys: all.flatMap((n) => n.manifestKeys).filter((k) => inTree(k.pkg)),
    importRoots: all.flatMap((n) => n.importRoots).filter((r) => isWithin(r, p.workdir)),
    pythons: all.flatMap((n) => n.pythons),
    pyNames: all.flatMap((n) => n.pyNames),
    wideScripts: all.flatMap((n) => n.wideScripts),
  };
}
