import { readdirSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { describeError } from "../../errors.ts";
import { aboveTop, configEntry, namedByCheckouts, namedByToolConfig } from "../../sandbox/config-named.ts";
import { askGit, type RepoFacts } from "../../sandbox/git-reach.ts";
import { runByGit } from "../../sandbox/git-runs.ts";
import { changedHookKeys, isHookManagerKey, readHookKeys } from "../../sandbox/hook-keys.ts";
import { type HostNamed, mainCheckout, namedByHost } from "../../sandbox/host-configs.ts";
import { hasToolsPart, isSectionedManifest, manifestText, toolsPart } from "../../sandbox/manifest-sections.ts";
import { addsPythonModule } from "../../sandbox/python-imports.ts";
import { shadowedNames } from "../../sandbox/python-names.ts";
import { claudeDirOf, claudeHomeReads } from "../../sys/claude-home-reads.ts";
import type { DlRead } from "../../sys/dl-reads.ts";
import { entryExists } from "../../sys/file-head.ts";
import { looksLikeGitDir, ruleForPath } from "../../sys/protected-names.ts";

/**
 * The jail's principle for the agent's own write tools, which need no jail to plant
 * code: a write_file to `.git/config` (`core.fsmonitor`) runs at the host's next
 * `git status`. So write_file and edit_file refuse, with `path_refused` and the rule
 * named:
 * - any path a protect rule covers (git metadata, hook managers' configs, the project's
 *   tool configuration; case-folded, after confinePath resolved the links);
 * - any path inside a folder git takes for a repository, and a write that would make one
 *   (the last of HEAD, objects/ and refs/);
 * - any path the configuration of the repository holding it names (the hooks dir, an
 *   fsmonitor script, an included config), nested repositories and submodules included;
 * - any file a protected configuration of a folder above it runs (a Claude Code hook's
 *   script, an `.mcp.json` server, husky's or pre-commit's script: config-named.ts);
 * - a package.json change to the keys hook managers run at commit (lint-staged, …);
 * - what dl itself reads later (sys/dl-reads.ts: DELEGATE_LOCAL_AGENTS_DIR's definitions,
 *   the settings file, CODEX_HOME), wherever the user's settings put it.
 * Reading stays allowed.
 */

export interface WriteProtection {
  /** DELEGATE_WRITABLE_TOOL_CONFIG: workdir paths a rule names that may be written (never git's). */
  writable: readonly string[];
  /** The allowlisted environment dl's own git questions run with (PATH, HOME). */
  gitEnv: Readonly<Record<string, string>>;
  /** The caller's project folder (config.callerDir): the configs above the workdir count from there (aboveTop). */
  project?: string;
  /** What dl itself reads later (sys/dl-reads.ts): refused wherever it lies. */
  dlReads?: readonly DlRead[];
}

/** What git says about a folder, asked at most this often (a write per call would spawn git each time). */
const GIT_TTL_MS = 5000;
const gitCache = new Map<string, { at: number; facts: Promise<RepoFacts | null> }>();

function gitFacts(dir: string, p: WriteProtection): Promise<RepoFacts | null> {
  const hit = gitCache.get(dir);
  if (hit && Date.now() - hit.at < GIT_TTL_MS) return hit.facts;
  const facts = askGit(dir, p.gitEnv.HOME ?? "/", { env: p.gitEnv });
  gitCache.set(dir, { at: Date.now(), facts });
  return facts;
}

const under = (p: string, root: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/** The deepest folder of `abs`'s path that exists (git is asked from there). */
function existingDir(abs: string, workdir: string): string {
  let d = dirname(abs);
  while (d !== workdir && under(d, workdir) && !entryExists(d)) d = dirname(d);
  return d;
}

/** A folder git takes for a repository (looksLikeGitDir), counting `extra`, the entry a write would add. */
function isRepositoryLike(dir: string, extra: string | null): boolean {
  try {
    return looksLikeGitDir([...readdirSync(dir), ...(extra ? [extra] : [])]);
  } catch {
    return false; // not there yet: one entry alone is no repository
  }
}

function refusedByRule(rel: string, inside: boolean, abs: string, p: WriteProtection): string | null {
  const hit = ruleForPath(inside ? rel : abs);
  if (!hit || (hit.rule.id !== "git-metadata" && p.writable.includes(hit.at))) return null;
  const ask =
    hit.rule.id === "git-metadata" ? "" : ", or ask the user to name the path in DELEGATE_WRITABLE_TOOL_CONFIG";
  return `path_refused: ${inside ? rel : abs} is ${hit.rule.what} (rule ${hit.rule.id}); delegates may not write it, since the host runs or obeys it without asking. Change the work tree's own files instead${ask}`;
}

function refusedAsRepository(workdir: string, abs: string): string | null {
  for (
    let d = dirname(abs), child = basename(abs);
    under(d, workdir) && d !== workdir;
    child = basename(d), d = dirname(d)
  ) {
    if (isRepositoryLike(d, entryExists(join(d, child)) ? null : child)) {
      return `path_refused: ${relative(workdir, d)} is, or would become, a git repository's own folder (rule git-metadata); delegates may not write inside it`;
    }
  }
  return null;
}

/** A config of `dir` (an entry a rule names, other than git's) that runs `abs`, with the line that puts its folder on PATH; `scope`: the tree it may name files of. */
function configRunning(
  dir: string,
  abs: string,
  scope: string,
  workdir: string,
  home: string | undefined,
): { config: string; line?: string; python?: PythonRun } | null {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  let python: { config: string; python: PythonRun } | null = null;
  for (const n of names) {
    if (!configEntry(n, dir)) continue;
    // A named file, or a path under a folder the config puts on PATH (config-programs.ts).
    const o = { workdir: scope, ignored: () => false, home };
    const named = namedByToolConfig(join(dir, n), o);
    // A folder on PATH that holds the workdir is not bound whole: only its new files count (below).
    // What a checkout inside the entry runs (.claude/worktrees/<name>'s own hooks) counts too.
    const nested = namedByCheckouts(named.checkouts, o).flatMap((c) => c.files);
    const folders = [...named.files, ...nested].filter((f) => !under(workdir, f));
    if (folders.some((f) => f === abs || under(abs, f))) return { config: join(dir, n) };
    // The folder on PATH is the workdir (never bound whole): a new file directly in it shadows a command.
    const onPath = entryExists(abs) ? undefined : named.pathDirs.find((p) => p.dir === dirname(abs));
    if (onPath) return { config: join(dir, n), line: onPath.line };
    // A module where its Python commands import from first (any name here: which names shadow one is asked later).
    if (!python && addsPythonModule(abs, named.importRoots, null)) python = { config: join(dir, n), python: named };
  }
  return python;
}

/** What a protected configuration's Python commands import from first, by which interpreters, and what its Python sources import. */
type PythonRun = { importRoots: string[]; pythons: string[]; pyNames: string[] };

/** Whether writing `abs` adds a module that `py`'s commands would import in place of one they import now. */
async function shadowsForPython(abs: string, py: PythonRun, env: Readonly<Record<string, string>>): Promise<boolean> {
  return addsPythonModule(abs, py.importRoots, await shadowedNames(py, { env }));
}

/**
 * The folders whose configurations may run `abs`, each with the tree it may name files of:
 * every folder from `abs`'s up to the workdir, then the caller's project or the repository
 * the workdir sits in (aboveTop), whose root's configs and those of every folder down to
 * the workdir (husky's, Claude Code's) run files below too.
 */
function configFolders(abs: string, workdir: string, top: string | null): [string, string][] {
  const dirs: [string, string][] = [];
  for (let d = dirname(abs); under(d, workdir); d = dirname(d)) dirs.push([d, workdir]);
  if (top && under(abs, top) && !under(top, workdir))
    for (let d = dirname(workdir); under(d, top) && d !== dirname(d); d = dirname(d)) dirs.push([d, top]);
  return dirs;
}

async function refusedAsNamedScript(
  workdir: string,
  abs: string,
  top: string | null,
  p: WriteProtection,
): Promise<string | null> {
  const env = p.gitEnv;
  const home = env.HOME;
  const writable = p.writable.map((w) => w.replace(/^\.\/|\/+$/g, ""));
  for (const [d, scope] of configFolders(abs, workdir, top)) {
    const hit = configRunning(d, abs, scope, workdir, home);
    const config = hit && (relative(workdir, hit.config) || hit.config);
    if (hit?.line !== undefined) {
      return `path_refused: ${relative(workdir, abs)} would be a new command in a folder ${config} puts on PATH (\`${hit.line}\`; rule config-named); delegates may not add files there, since the host's shell would run it in place of a command. Edit an existing file, or write the new one in a subfolder`;
    }
    if (hit?.python) {
      if (await shadowsForPython(abs, hit.python, env)) return pythonModuleRefusal(relative(workdir, abs), `${config}`);
      continue;
    }
    if (hit) {
      if (writable.includes(relative(workdir, abs))) continue;
      return `path_refused: ${relative(workdir, abs)} is read or run by ${config} (rule config-named: a protected configuration runs it, loads it, or imports through it); delegates may not write it. Change the work tree's other files, or ask the user to name the path in DELEGATE_WRITABLE_TOOL_CONFIG`;
    }
  }
  return refusedByHost(workdir, abs, await hostNamed(workdir, p), p);
}

/** Claude Code's configurations outside the tree (host-configs.ts), as git places the workdir. */
async function hostNamed(workdir: string, p: WriteProtection): Promise<HostNamed> {
  let facts: RepoFacts | null = null;
  try {
    facts = await gitFacts(workdir, p);
  } catch {
    // git unanswered: refusedWrite has refused the write already
  }
  const toplevel = facts?.toplevel ?? null;
  const top = aboveTop(workdir, p.project, toplevel);
  const home = p.gitEnv.HOME;
  const places = { workdir, top, toplevel, mainRoot: mainCheckout(facts ?? undefined), home };
  return namedByHost({ ...places, claudeDir: claudeDirOf(p.dlReads, home) }, () => false);
}

const HOST_CONFIGS =
  "Claude Code's configuration outside the tree (the user's or the administrator's settings, the user's agents, skills or commands, an installed plugin, the MCP servers of .claude.json, or a linked worktree's main .claude/settings.local.json)";

/** A file one of Claude Code's own configurations runs in this project (the user's status line's `npx ccusage`): the refusal, or null. */
async function refusedByHost(
  workdir: string,
  abs: string,
  host: HostNamed,
  p: WriteProtection,
): Promise<string | null> {
  const path = relative(workdir, abs);
  if (host.files.some((f) => under(abs, f)) && !p.writable.some((w) => w.replace(/^\.\/|\/+$/g, "") === path))
    return `path_refused: ${path} is read or run by ${HOST_CONFIGS} (rule config-named); delegates may not write it, since Claude Code runs it in this project without asking. Change the work tree's other files, or ask the user to name the path in DELEGATE_WRITABLE_TOOL_CONFIG`;
  const line = host.workdirOnPath[0]?.line;
  if (line !== undefined && dirname(abs) === workdir && !entryExists(abs))
    return `path_refused: ${path} would be a new command in the workdir, which ${HOST_CONFIGS} puts on PATH (\`${line}\`; rule config-named); delegates may not add files there. Write the new one in a subfolder`;
  if (await shadowsForPython(abs, host, p.gitEnv)) return pythonModuleRefusal(path, HOST_CONFIGS);
  return null;
}

function pythonModuleRefusal(path: string, by: string): string {
  return `path_refused: ${path} would be a new Python module where ${by} runs Python, which imports from that folder before the standard library and installed packages (rule config-named); delegates may not add modules there, since it would run in place of one. Edit an existing file, or write the new one in a package folder`;
}

/** A path dl itself reads later (an agent definition of DELEGATE_LOCAL_AGENTS_DIR, the settings file): the refusal, or null. */
function refusedAsDlRead(abs: string, p: WriteProtection): string | null {
  const reads = [...(p.dlReads ?? []), ...claudeHomeReads(claudeDirOf(p.dlReads, p.gitEnv.HOME))];
  const hit = reads.find((d) => under(abs, d.path));
  if (!hit) return null;
  if (hit.reader)
    return `path_refused: ${abs} is loaded by ${hit.reader} as configuration it runs (${hit.setting}; rule dl-config); delegates may not write it, since the next session runs it`;
  return `path_refused: ${abs} is read by dl itself as instructions, configuration or a program (${hit.setting}; rule dl-config); delegates may not write it, since the next delegation obeys it`;
}

/** The refusal's text (`path_refused: … (rule …)`), or null when the write may go ahead. */
export async function refusedWrite(workdir: string, abs: string, p: WriteProtection): Promise<string | null> {
  const rel = relative(workdir, abs);
  const inside = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  const byRule = refusedByRule(rel, inside, abs, p) ?? refusedAsRepository(workdir, abs) ?? refusedAsDlRead(abs, p);
  if (byRule) return byRule;
  let facts: RepoFacts | null;
  try {
    facts = await gitFacts(existingDir(abs, workdir), p);
  } catch (e) {
    // What git runs there is unknown (git_unanswered): refused, never taken to be nothing.
    return `path_refused: ${inside ? rel : abs}: ${describeError(e)}`;
  }
  for (const named of [...(facts?.hooksDirs ?? []), ...(facts?.named ?? [])]) {
    if (under(abs, named)) {
      return `path_refused: ${inside ? rel : abs} is named by git's configuration (rule git-config: a hooks dir, a program or an included file git runs or reads); delegates may not write it`;
    }
  }
  // A script of the tree that a hook or a config value runs (a hook linked to scripts/pre-commit),
  // or a file of a package it runs (node_modules/lint-staged and what it requires: named whole).
  const byGit = facts?.toplevel ? runByGit(facts, facts.toplevel, () => false) : null;
  if (byGit?.files.some((f) => under(abs, f))) {
    return `path_refused: ${inside ? rel : abs} is run by a git hook or git's configuration (rule git-config); delegates may not write it`;
  }
  if (byGit && (await shadowsForPython(abs, byGit, p.gitEnv)))
    return pythonModuleRefusal(inside ? rel : abs, "a git hook");
  return refusedAsNamedScript(workdir, abs, aboveTop(workdir, p.project, facts?.toplevel ?? null), p);
}

/**
 * The keys of `pkg` that the protected configurations of its folder and of every folder
 * above it run (`npm run lint` in a husky hook, `cd web && npm run lint` in Claude Code's
 * settings at the root), as the jail's walk finds them: scripts there or not yet.
 */
function scriptsRunFrom(pkg: string, workdir: string, top: string | null): string[] {
  return configFolders(pkg, workdir, top).flatMap(([dir, scope]) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    return names.flatMap((n) => {
      if (!configEntry(n, dir)) return [];
      const run = namedByToolConfig(join(dir, n), { workdir: scope, ignored: () => false });
      return [
        ...run.npmScripts.filter((s) => s.pkg === pkg).map((s) => `scripts.${s.name}`),
        ...run.manifestKeys.filter((k) => k.pkg === pkg).map((k) => k.key),
        ...run.wideScripts.map((n) => `scripts.${n}`),
      ];
    });
  });
}

/** The tree above the workdir whose configurations count too (aboveTop), as git places the repository `abs` is in. */
async function topOf(workdir: string, abs: string, p: WriteProtection): Promise<string | null> {
  try {
    return aboveTop(workdir, p.project, (await gitFacts(existingDir(abs, workdir), p))?.toplevel ?? null);
  } catch {
    return aboveTop(workdir, p.project, null); // git unanswered: refusedWrite has refused the write already
  }
}

/** The package.json keys git's hooks run through (`npm run lint` in `.git/hooks/pre-commit`). */
async function keysRunByGit(abs: string, workdir: string, p: WriteProtection): Promise<string[]> {
  try {
    const facts = await gitFacts(existingDir(abs, workdir), p);
    if (!facts?.toplevel) return [];
    const byGit = runByGit(facts, facts.toplevel, () => false);
    return [
      ...byGit.manifestKeys.filter((k) => k.pkg === abs).map((k) => k.key),
      ...byGit.wideScripts.map((n) => `scripts.${n}`),
    ];
  } catch {
    return []; // git unanswered: refusedWrite has refused the write already
  }
}

/** A manifest whose new text changes what a hook manager, a tool or a protected configuration reads in it: the refusal, or null. */
export async function refusedContent(
  workdir: string,
  abs: string,
  text: string,
  p: WriteProtection,
): Promise<string | null> {
  if (isSectionedManifest(abs)) return refusedToolsPart(workdir, abs, text);
  if (basename(abs) !== "package.json") return null;
  const host = await hostNamed(workdir, p);
  const run = [
    ...scriptsRunFrom(abs, workdir, await topOf(workdir, abs, p)),
    ...(await keysRunByGit(abs, workdir, p)),
    ...host.npmScripts.filter((s) => s.pkg === abs).map((s) => `scripts.${s.name}`),
    ...host.manifestKeys.filter((k) => k.pkg === abs).map((k) => k.key),
    ...host.wideScripts.map((n) => `scripts.${n}`),
  ];
  const before = readHookKeys(dirname(abs), "package.json", run);
  const keys = changedHookKeys(before, text);
  if (keys.length === 0) return null;
  const runs = keys.some((k) => isHookManagerKey(k) || k.startsWith("scripts."));
  const reader = runs
    ? "a git hook manager or a protected configuration runs without asking (rule hook-manager)"
    : "a tool reads as its configuration whenever it or its editor extension runs (rule tool-config; package.json's own fields stay writable)";
  return `path_refused: ${relative(workdir, abs)}: the change touches ${keys.join(", ")}, which ${reader}; keep those keys as they are`;
}

/** A Python manifest whose tools' part (manifest-sections.ts) the new text changes: the refusal, or null. */
function refusedToolsPart(workdir: string, abs: string, text: string): string | null {
  // Absent before: only a tools' part of its own counts; there but unreadable or too large: any change does.
  const before = entryExists(abs) ? manifestText(abs) : null;
  const same = entryExists(abs)
    ? before !== null && toolsPart(abs, before) === toolsPart(abs, text)
    : !hasToolsPart(abs, text);
  if (same) return null;
  return `path_refused: ${relative(workdir, abs)}: the change touches what other tools read in it (its [tool.*] tables or tool sections: pylint's init-hook, pytest's addopts, mypy's plugins, run whenever the tool or its editor extension runs; rule tool-config); change only the project's own tables ([project], [metadata], [options])`;
}
