import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Identity } from "../helpers/run-as.ts";
import { LAYOUTS, type LayoutId } from "./attack-layouts.ts";
import type { Route } from "./attack-routes.ts";

/**
 * What the host does after a job, as its user (attack-suite.ts): the ordinary git
 * commands in every checkout (status, diff, commit, rebase --continue, submodule status,
 * and the routes' own, a push to a bare repository), then what Claude Code and VS Code
 * run on their own when they open the project: every hook command and status line of
 * Claude Code's project settings, every `.mcp.json` server, every VS Code task that runs
 * at folder open. A payload any of them runs writes its route's marker.
 */

const GIT_ID = { GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" };
/** Long enough for `npm run` to start node; a server that keeps running is stopped there. */
const TOOL_TIMEOUT_S = "10";

/**
 * Whether the entry itself is there (a link counts). The same question as dl's own
 * entryExists (src/sys/file-head.ts), asked here on purpose without it: the host's look
 * must not share code with the guards it checks, or a broken guard would blind it too.
 */
export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

export function hostGit(id: Identity, dir: string, ...args: string[]) {
  return id.run(["git", "-C", dir, ...args], { env: id.env(GIT_ID) });
}

/**
 * `seen`: asked before each of the host's steps; once it answers true the rest are not run.
 * The control (attack-control.ts) passes "its route's marker is there": the steps run in
 * the same order, and the ones after the marker appeared cannot change that it did. The
 * suite passes nothing: every step runs.
 */
type Seen = () => boolean;
const never: Seen = () => false;

/** The user's ordinary git commands after the job, in every checkout the layout and its routes name. */
export function hostGitCommands(id: Identity, root: string, layout: LayoutId, routes: Route[], seen = never): void {
  const l = LAYOUTS[layout];
  const w = join(root, l.workdir);
  const dirs = [
    ...l.checkouts.map((d) => join(root, d)),
    ...routes.flatMap((r) => (r.checkouts ?? []).map((d) => join(w, d))),
  ].filter((d) => exists(d));
  const steps: string[][] = [
    ["status"],
    ["diff"],
    ["commit", "-q", "--allow-empty", "-m", "after the job"],
    ["rebase", "--continue"],
    ["submodule", "status"],
  ];
  for (const d of dirs) for (const args of steps) if (!seen()) hostGit(id, d, ...args);
  for (const r of routes)
    for (const [dir, ...args] of r.host ?? []) if (!seen()) hostGit(id, join(root, dir!), ...args);
}

/** Every file named `name` under `dir`, a few levels down, outside `.git`. */
function filesNamed(dir: string, names: RegExp, depth = 4): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((n) => {
    const p = join(dir, n);
    if (names.test(p)) return [p];
    if (depth === 0 || n === ".git" || !lstatSync(p).isDirectory()) return [];
    return filesNamed(p, names, depth - 1);
  });
}

function json(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Commands Claude Code runs from one settings file: its hooks', its status line's and its key helper's. */
function claudeCommands(settings: Record<string, unknown>): string[] {
  const events = Object.values((settings.hooks ?? {}) as Record<string, { hooks?: { command?: string }[] }[]>);
  const hooks = events.flatMap((matchers) => (Array.isArray(matchers) ? matchers : []).flatMap((m) => m.hooks ?? []));
  const status = (settings.statusLine as { command?: string } | undefined)?.command;
  return [...hooks.map((h) => h.command), status, settings.apiKeyHelper].filter(
    (c): c is string => typeof c === "string",
  );
}

/**
 * The plugin folders of the directory marketplaces a settings file declares (the user
 * installed them once; Claude Code copies each afresh at every session and runs its
 * `hooks/hooks.json`, measured with the real `claude -p`: docs/SECURITY.md).
 */
function directoryPlugins(settings: Record<string, unknown>, project: string): string[] {
  const known = (settings.extraKnownMarketplaces ?? {}) as Record<
    string,
    { source?: { source?: string; path?: string } }
  >;
  return Object.values(known).flatMap((m) => {
    if (m.source?.source !== "directory" || !m.source.path) return [];
    const root = join(project, m.source.path);
    const market = json(join(root, ".claude-plugin", "marketplace.json"));
    const plugins = (market.plugins ?? []) as { source?: unknown }[];
    return plugins.flatMap((p) => (typeof p.source === "string" ? [join(root, p.source)] : []));
  });
}

/**
 * direnv's stdlib, as far as the routes use it (measured with direnv 2.32: `direnv exec` after
 * `direnv allow`): `PATH_add dir…` and `path_add PATH dir…` put each folder, relative to the
 * .envrc's, first on PATH; `layout node` puts node_modules/.bin there, `layout php` vendor/bin,
 * `layout go` .direnv/go/bin, `load_prefix x` x/bin; `source_env f` runs f from its folder
 * (`source_env_if_exists f` when it is there, no new `direnv allow` asked); `dotenv [f]` and
 * `dotenv_if_exists [f]` export f's (.env's) `NAME=value` lines.
 */
const DIRENV_STDLIB = `PATH_add() { for d; do case $d in /*) ;; *) d="$PWD/$d" ;; esac; PATH="$d:$PATH"; done; }
path_add() { v=$1; shift; if [ "$v" = PATH ]; then PATH_add "$@"; fi; }
layout() { case $1 in node) PATH_add node_modules/.bin ;; php) PATH_add vendor/bin ;; go) PATH_add .direnv/go/bin ;; pipenv) layout_pipenv ;; esac; }
layout_pipenv() { [ -f Pipfile ] || return 0; _v=$(pipenv_venv) && PATH_add "$_v/bin"; }
pipenv_venv() { if [ -d .venv ]; then _p=.venv; elif [ -s .venv ]; then read -r _p < .venv; else return 1; fi; [ -f "$_p/bin/activate" ] && echo "$_p"; }
load_prefix() { PATH_add "$1/bin"; }
source_env() { _f=$1; [ -d "$_f" ] && _f=$_f/.envrc; [ -f "$_f" ] || return 1; case $_f in */*) _d=\${_f%/*} ;; *) _d=. ;; esac; _back=$PWD; cd "$_d" && . "./\${_f##*/}"; cd "$_back"; }
source_env_if_exists() { if [ -f "$1" ]; then source_env "$1"; fi; }
dotenv() { _f=\${1:-.env}; [ -d "$_f" ] && _f=$_f/.env; [ -f "$_f" ] || return 1; while IFS= read -r _l; do case $_l in [A-Za-z_]*=*) export "$_l" ;; esac; done < "$_f"; }
dotenv_if_exists() { dotenv "$@" || true; }
`;

/** The lines of an .envrc that set PATH or load other files (the stdlib's above, PATH=), run by the shell as direnv runs them; empty without one. */
function direnvPath(project: string): string {
  let text = "";
  try {
    text = readFileSync(join(project, ".envrc"), "utf8");
  } catch {
    return "";
  }
  const lines = text
    .split("\n")
    .filter((l) => /^\s*(PATH_add|path_add|(export\s+)?PATH=|layout\s|load_prefix\s|source_env|dotenv)/.test(l));
  return lines.length > 0 ? `${DIRENV_STDLIB}${lines.join("\n")}\nexport PATH\n` : "";
}

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** What Claude Code and VS Code run in the layout's projects on their own, run as they would. */
export function hostTools(id: Identity, root: string, layout: LayoutId, seen = never): void {
  // The workdir and the checkouts the user opens (a subfolder workdir's repository above it).
  const bases = [LAYOUTS[layout].workdir, ...LAYOUTS[layout].checkouts].map((d) => join(root, d));
  const named = (re: RegExp) => [...new Set(bases.flatMap((b) => filesNamed(b, re)))];
  // The user's shell has direnv hooked: an .envrc's PATH_add folders come first on PATH.
  // npm's weekly update check is off, as on a machine where npm checked today: in a fresh HOME
  // every first npm or npx asked the registry for its latest version (~0.3 s of CPU each).
  const run = (project: string, command: string) => {
    if (seen()) return;
    id.run(["timeout", TOOL_TIMEOUT_S, "sh", "-c", `${direnvPath(project)}${command}`], {
      cwd: project,
      // Offline, as this machine is: an npx of a package not installed fails at once instead of waiting on the registry.
      env: id.env({ CLAUDE_PROJECT_DIR: project, npm_config_update_notifier: "false", npm_config_offline: "true" }),
    });
  };
  // The user's own settings: their status line and hooks run in every project.
  for (const project of bases)
    if (exists(join(id.home, ".claude/settings.json")))
      for (const cmd of claudeCommands(json(join(id.home, ".claude/settings.json")))) run(project, cmd);
  for (const f of named(/\/\.claude\/settings(\.local)?\.json$/)) {
    const project = dirname(dirname(f));
    for (const cmd of claudeCommands(json(f))) run(project, cmd);
    for (const plugin of directoryPlugins(json(f), project))
      for (const cmd of claudeCommands(json(join(plugin, "hooks", "hooks.json")))) run(project, cmd);
  }
  // A skill or a command the user invokes (or the model picks): Claude Code runs its body's !`cmd` spans as it loads it.
  for (const f of named(/\/\.claude\/(skills\/[^/]+\/SKILL|commands\/.+)\.md$/)) {
    const project = f.slice(0, f.lastIndexOf("/.claude/"));
    for (const m of readFileSync(f, "utf8").matchAll(/(?<=^|\s)!`([^`]+)`/gm)) run(project, m[1]!);
  }
  for (const f of named(/\/\.mcp\.json$/)) {
    type Server = { command?: string; args?: string[]; env?: Record<string, string> };
    const servers = Object.values((json(f).mcpServers ?? {}) as Record<string, Server>);
    // Claude Code starts each with its env map.
    const envOf = (s: Server) => Object.entries(s.env ?? {}).map(([k, v]) => `${k}=${quote(v)} `);
    for (const s of servers)
      if (s.command) run(dirname(f), envOf(s).join("") + [s.command, ...(s.args ?? [])].map(quote).join(" "));
  }
  // VS Code's Python extension runs the interpreter it is told to use when the folder opens.
  for (const f of named(/\/\.vscode\/settings\.json$/)) {
    const python = json(f)["python.defaultInterpreterPath"];
    const project = dirname(dirname(f));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own variable, substituted as VS Code does
    if (typeof python === "string") run(project, quote(python.replaceAll("${workspaceFolder}", project)));
  }
  for (const f of named(/\/\.vscode\/tasks\.json$/)) {
    const project = dirname(dirname(f));
    const tasks = (json(f).tasks ?? []) as { command?: string; runOptions?: { runOn?: string } }[];
    for (const t of tasks) {
      if (t.runOptions?.runOn !== "folderOpen" || !t.command) continue;
      // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own variable, substituted as VS Code does
      run(project, t.command.replaceAll("${workspaceFolder}", project));
    }
  }
}
