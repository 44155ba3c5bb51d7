import { lstatSync, readFileSync, unlinkSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { DlError } from "../errors.ts";
import { claudeDirOf, claudeHomeReads } from "../sys/claude-home-reads.ts";
import type { DlRead } from "../sys/dl-reads.ts";
import { isWithin } from "../sys/paths.ts";
import { isDotGit } from "../sys/protected-names.ts";
import { type ChangeSummary, summarizeChanges } from "./change-summary.ts";
import { aboveTop, isManifest, namedByCheckouts, namedByToolConfig, namedFromAbove } from "./config-named.ts";
import type { PathDir } from "./config-programs.ts";
import { askGit, type GitAsk, type RepoFacts } from "./git-reach.ts";
import { runByGit } from "./git-runs.ts";
import { mainCheckout, namedByHost } from "./host-configs.ts";
import { type ManifestWatch, newToolManifests, restoreManifestParts, watchManifests } from "./manifest-guard.ts";
import { jobBytecode, newPythonModules } from "./python-imports.ts";
import { shadowedNames } from "./python-names.ts";
import { makeStandIns, type ProtectedPath, type StandInWish } from "./stand-ins.ts";
import { MAX_SCAN_ENTRIES, scanTree, type TreeScan, underIgnored } from "./tree-scan.ts";
import { judgeTree, type Tampered } from "./tree-verdict.ts";

/**
 * The principle behind the jail, for one job: nothing a delegate writes is code the host
 * runs, or configuration that steers the host's tools, before the user chooses to run it.
 * Before the job: ask git where every repository reachable from the workdir keeps its
 * metadata and what its configuration names, walk the tree for every `.git`, repository
 * and protected entry, and hand the jail the list to bind read-only (plus empty stand-ins
 * for the few absent folders a host reads at once). After it, walk again before anything
 * runs git there: what is new is moved out and fails the job `jail_git_tampered`, hook
 * keys of package.json are put back, and the files the job changed are counted.
 */

export interface GitTamper {
  failureKind: "jail_git_tampered";
  message: string;
  changed: string[];
}

export interface TreeVerdict {
  tamper: GitTamper | null;
  changes: ChangeSummary;
}

export interface TreeGuard {
  /** Entries inside the workdir the jail binds read-only (they exist). */
  protectedPaths: ProtectedPath[];
  /** The workdir's own git dirs outside it (a linked worktree's common dir): shown read-only. */
  gitDirsOutside: string[];
  /** The protected paths relative to the workdir, for the job's result. */
  keptReadOnly: string[];
  /** Walks again, judges, removes the stand-ins. Call once, after the run. */
  finish(): Promise<TreeVerdict>;
}

export interface TreeGuardOptions extends GitAsk {
  home: string;
  /**
   * Makes and returns the private folder moved-out entries go to (a folder of the job's,
   * or dl's own under its cache dir: quarantine.ts). Called only when something is moved.
   */
  quarantine: () => string;
  /** Workdir-relative paths the user lets delegates write although a rule names them (never git's). */
  writable?: readonly string[];
  /** The caller's project folder (where the host runs: config.callerDir): see aboveTop. */
  project?: string;
  /** What dl itself reads later (sys/dl-reads.ts): kept read-only where it lies inside the workdir. */
  dlReads?: readonly DlRead[];
}

const rel = (root: string, p: string) => relative(root, p);
const inside = (root: string, p: string) => p !== root && isWithin(p, root);

function kindOf(path: string): "dir" | "file" | "link" | null {
  try {
    const st = lstatSync(path);
    return st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : "file";
  } catch {
    return null;
  }
}

/** The git dir a gitfile names (`gitdir: …`), or null. */
function gitfileTarget(path: string): string | null {
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(path, "utf8").slice(0, 4096));
    return m?.[1] ? (isAbsolute(m[1]) ? m[1] : resolve(dirname(path), m[1])) : null;
  } catch {
    return null;
  }
}

function insideGitDir(workdir: string, gitDir: string): DlError {
  return new DlError(
    "workdir_forbidden",
    `workdir ${workdir} is inside a git dir (${gitDir}); pass the work tree instead`,
    {
      failure_kind: "workdir_forbidden",
      reason: "git_dir",
    },
  );
}

/** What git says about the workdir's repository and every repository nested in it. */
async function repositories(
  workdir: string,
  own: RepoFacts | null,
  scan: TreeScan,
  o: TreeGuardOptions,
): Promise<RepoFacts[]> {
  const out: RepoFacts[] = own ? [own] : [];
  // A nested repository's own configuration (hooksPath, includes) counts as much as the top
  // one's: past the cap the job is refused, never run with some repositories unasked.
  if (scan.gitEntries.size > MAX_NESTED_REPOS) throw tooManyRepos(workdir, scan.gitEntries.size);
  for (const [r, e] of scan.gitEntries) {
    if (!isDotGit(basename(r)) || e.kind === "link") continue; // a bare-like folder: bound whole, no work tree
    const facts = await askGit(join(workdir, dirname(r)), o.home, o);
    if (facts && !facts.insideGitDir) out.push(facts);
  }
  return out;
}

/** Folders of the workdir's root whose settings a host reloads while a job runs. */
const LIVE_CONFIG = [".claude", ".vscode"];

interface Plan {
  protectedPaths: ProtectedPath[];
  /** Relative to the workdir: config-named paths, watched for new entries. */
  named: string[];
  /** Absent entries to stand in for while the job runs. */
  standIns: StandInWish[];
  /** The configs' lines that put the workdir itself on PATH: its new files are moved out after the job. */
  workdirOnPath: PathDir[];
  /** package.json (workdir-relative) → scripts a protected configuration runs (`scripts.lint`), put back after the job. */
  scriptKeys: Map<string, string[]>;
  /** Scripts run across the workspace (`pnpm -r lint`): kept in every package.json, a new one too. */
  wideScripts: string[];
  /** Folders (workdir-relative, "" for the workdir) a protected Python command imports from first: their new modules are moved out. */
  importRoots: Set<string>;
  /** Their interpreters, and the module names protected Python sources import. */
  pythons: string[];
  pyNames: string[];
}

/** What the protected configurations run (config-named.ts), outside ignored folders. */
function namedByConfigs(workdir: string, scan: TreeScan, keep: (r: string) => boolean, p: PlanOptions) {
  const o = { workdir, ignored: (abs: string) => underIgnored(rel(workdir, abs), p.ignored), home: p.home };
  const configs = [...scan.ruleEntries].filter(([r, { rule }]) => rule.id !== "git-metadata" && keep(r));
  // Each package.json's hook keys are configuration its hook manager runs (config-named.ts).
  const manifests = [...scan.entries].filter(
    ([r, e]) => e.kind === "file" && isManifest(r) && !underIgnored(r, p.ignored),
  );
  const direct = [...configs, ...manifests].map(([r]) => namedByToolConfig(join(workdir, r), o));
  // A checkout inside a protected folder (.claude/worktrees/<name>) is a project the host opens on its own.
  const nested = namedByCheckouts(
    direct.flatMap((n) => n.checkouts),
    o,
  );
  const all = [...direct, ...nested];
  return {
    files: all.flatMap((n) => n.files),
    workdirOnPath: all.flatMap((n) => n.pathDirs.filter((p) => p.dir === workdir)),
    npmScripts: all.flatMap((n) => n.npmScripts),
    manifestKeys: all.flatMap((n) => n.manifestKeys),
    importRoots: all.flatMap((n) => n.importRoots),
    pythons: all.flatMap((n) => n.pythons),
    pyNames: all.flatMap((n) => n.pyNames),
    wideScripts: all.flatMap((n) => n.wideScripts),
  };
}

/**
 * What the configurations outside the tree run of it: those of the folders above a
 * subfolder workdir (namedFromAbove), and Claude Code's own, from the user's settings and
 * state and a linked worktree's main checkout (host-configs.ts).
 */
function namedFromOutside(workdir: string, repos: RepoFacts[], o: PlanOptions) {
  const ignored = (abs: string) => underIgnored(rel(workdir, abs), o.ignored);
  const toplevel = repos[0]?.toplevel ?? null;
  const top = aboveTop(workdir, o.project, toplevel);
  const above = namedFromAbove(workdir, top, ignored, o.home);
  const claudeDir = claudeDirOf(o.dlReads, o.home);
  const host = namedByHost(
    { workdir, top, toplevel, mainRoot: mainCheckout(repos[0]), home: o.home, claudeDir },
    ignored,
  );
  return {
    files: [...above.files, ...host.files],
    workdirOnPath: [...above.workdirOnPath, ...host.workdirOnPath],
    npmScripts: host.npmScripts,
    manifestKeys: host.manifestKeys,
    importRoots: [...above.importRoots, ...host.importRoots],
    pythons: [...above.pythons, ...host.pythons],
    pyNames: [...above.pyNames, ...host.pyNames],
    wideScripts: [...above.wideScripts, ...host.wideScripts],
  };
}

/** Everything to keep read-only, from the walk, from what git said and from what the protected configs run. */
function planFor(workdir: string, scan: TreeScan, repos: RepoFacts[], o: PlanOptions): Plan {
  const writable = new Set((o.writable ?? []).map((p) => p.replace(/^\.\/|\/+$/g, "")));
  const paths = new Map<string, ProtectedPath["kind"]>();
  const add = (abs: string) => {
    const k = kindOf(abs);
    if (k === "dir" || k === "file") paths.set(abs, k);
  };
  for (const r of scan.gitEntries.keys()) add(join(workdir, r));
  const keep = (r: string) => scan.ruleEntries.get(r)?.rule.id === "git-metadata" || !writable.has(r);
  for (const r of scan.ruleEntries.keys()) if (keep(r)) add(join(workdir, r));
  const named = new Set<string>();
  const standIns: StandInWish[] = [];
  for (const repo of repos) {
    for (const p of [...repo.named, ...repo.hooksDirs]) {
      if (!inside(workdir, p)) continue;
      named.add(rel(workdir, p));
      add(p);
    }
    // An absent hooks dir in the work tree (husky before `npm install`), an absent included config file.
    for (const h of repo.hooksDirs) if (inside(workdir, h)) standIns.push({ path: h, kind: "dir" });
    for (const i of repo.includes) if (inside(workdir, i)) standIns.push({ path: i, kind: "file" });
  }
  const run = namedByConfigs(workdir, scan, keep, o);
  const above = namedFromOutside(workdir, repos, o);
  // What git's hooks and config files run of the tree (a hook linked to scripts/pre-commit).
  const byGit = repos.map((r) => runByGit(r, workdir, (abs) => underIgnored(rel(workdir, abs), o.ignored)));
  for (const p of [...run.files, ...above.files, ...byGit.flatMap((g) => g.files)]) {
    // A path the user lets delegates write (DELEGATE_WRITABLE_TOOL_CONFIG): a tool's config, or what one names.
    if (writable.has(rel(workdir, p))) continue;
    named.add(rel(workdir, p));
    add(p);
  }
  // What dl itself reads later (an agents dir the settings put in the tree): bound, or stood in for, and watched.
  for (const d of [...(o.dlReads ?? []), ...claudeHomeReads(claudeDirOf(o.dlReads, o.home))]) {
    if (!inside(workdir, d.path)) continue;
    named.add(rel(workdir, d.path));
    if (kindOf(d.path) === null) standIns.push({ path: d.path, kind: d.kind });
    else add(d.path);
  }
  const scriptKeys = new Map<string, string[]>();
  for (const { pkg, key } of [
    ...run.npmScripts.map((s) => ({ pkg: s.pkg, key: `scripts.${s.name}` })),
    ...run.manifestKeys,
    ...above.npmScripts.map((s) => ({ pkg: s.pkg, key: `scripts.${s.name}` })),
    ...above.manifestKeys,
    ...byGit.flatMap((g) => g.manifestKeys).filter((k) => inside(workdir, k.pkg)),
  ])
    scriptKeys.set(rel(workdir, pkg), [...(scriptKeys.get(rel(workdir, pkg)) ?? []), key]);
  for (const g of scan.gitEntries.keys()) {
    const target = kindOf(join(workdir, g)) === "file" ? gitfileTarget(join(workdir, g)) : null;
    if (target && inside(workdir, target)) add(target);
  }
  // No repository of its own: an empty `.git` keeps the jail from making one. No
  // `.claude`: an empty one keeps a job from planting the agents dl looks up first and
  // the settings Claude Code reloads while it runs; `.vscode` likewise for VS Code.
  standIns.push({ path: join(workdir, ".git"), kind: "dir" });
  for (const d of LIVE_CONFIG) if (!writable.has(d)) standIns.push({ path: join(workdir, d), kind: "dir" });
  return {
    protectedPaths: [...paths].map(([path, kind]) => ({ path, kind })),
    named: [...named],
    workdirOnPath: [...run.workdirOnPath, ...above.workdirOnPath],
    standIns,
    scriptKeys,
    wideScripts: [...new Set([run, above, ...byGit].flatMap((n) => n.wideScripts))],
    ...pythonPlan(workdir, [run, above, ...byGit]),
  };
}

type PythonRuns = { importRoots: string[]; pythons: string[]; pyNames: string[] };

/** The folders (workdir-relative) the protected Python commands import from first, their interpreters and the names their sources import. */
function pythonPlan(workdir: string, all: readonly PythonRuns[]): Pick<Plan, "importRoots" | "pythons" | "pyNames"> {
  return {
    importRoots: new Set(
      all
        .flatMap((a) => a.importRoots)
        .filter((d) => inside(workdir, d) || d === workdir)
        .map((d) => (d === workdir ? "" : rel(workdir, d))),
    ),
    pythons: all.flatMap((a) => a.pythons),
    pyNames: all.flatMap((a) => a.pyNames),
  };
}

interface PlanOptions {
  home: string;
  writable?: readonly string[];
  dlReads?: readonly DlRead[];
  project?: string;
  ignored: ReadonlySet<string>;
}

function ignoredSet(workdir: string, repos: RepoFacts[]): Set<string> {
  return new Set(repos.flatMap((r) => r.ignoredDirs.filter((d) => inside(workdir, d)).map((d) => rel(workdir, d))));
}

/** Nested repositories (and git entries) git is asked about, each with a few git commands. */
const MAX_NESTED_REPOS = 200;

function tooManyRepos(workdir: string, count: number): DlError {
  return new DlError(
    "bad_input",
    `workdir ${workdir} holds ${count} git entries (nested repositories, gitfiles): more than the ${MAX_NESTED_REPOS} dl asks git about before a job; pass a smaller folder`,
    { failure_kind: "workdir_forbidden", reason: "too_large" },
  );
}

function tooLarge(workdir: string): DlError {
  return new DlError(
    "bad_input",
    `workdir ${workdir} holds more than ${MAX_SCAN_ENTRIES} entries: too many for dl to account for what a job changes; pass a smaller folder`,
    { failure_kind: "workdir_forbidden", reason: "too_large" },
  );
}

export async function prepareTreeGuard(workdir: string, o: TreeGuardOptions): Promise<TreeGuard> {
  // Ignored folders first (git's rules as they are before the job), then the walk.
  const own = await askGit(workdir, o.home, o);
  if (own?.insideGitDir) throw insideGitDir(workdir, own.gitDir);
  const ignored = ignoredSet(workdir, own ? [own] : []);
  const before = await scanTree(workdir, { ignored });
  if (before.truncated) throw tooLarge(workdir);
  const repos = await repositories(workdir, own, before, o);
  for (const i of ignoredSet(workdir, repos)) ignored.add(i);
  const plan = planFor(workdir, before, repos, {
    writable: o.writable,
    dlReads: o.dlReads,
    project: o.project,
    ignored,
    home: o.home,
  });
  const pyNames = plan.importRoots.size > 0 ? await shadowedNames(plan, o) : new Set<string>();
  const stands = makeStandIns(workdir, plan.standIns);
  const manifests = watchManifests(workdir, before, ignored, plan.scriptKeys, plan.wideScripts);
  const ownRepo = repos[0]?.toplevel === workdir ? repos[0] : undefined;
  const gitDirsOutside = ownRepo && !isWithin(ownRepo.commonDir, workdir) ? [ownRepo.commonDir] : [];
  let done = false;
  return {
    protectedPaths: [...plan.protectedPaths, ...stands.mounts],
    gitDirsOutside,
    keptReadOnly: [...plan.protectedPaths, ...stands.mounts].map((p) => rel(workdir, p.path)),
    async finish() {
      if (done) throw new DlError("internal", "the tree check runs once per job");
      done = true;
      stands.remove();
      const s = {
        before,
        ignored,
        named: plan.named,
        onPath: plan.workdirOnPath.length > 0,
        importRoots: plan.importRoots,
        pyNames,
        manifests,
        hostOnly: stands.hostOnly,
      };
      return finishGuard(workdir, { ...s, quarantine: o.quarantine });
    },
  };
}

/** Removes the compiled modules a job made or changed (python-imports.ts jobBytecode): caches the host makes again from the source. */
function dropBytecode(workdir: string, rels: readonly string[]): void {
  for (const r of rels) {
    try {
      unlinkSync(join(workdir, r));
    } catch {
      // gone already, or a folder of that name: Python loads neither
    }
  }
}

/** Files and links new directly in the workdir (a folder is no command; existing files stay writable). */
function newTopFiles(before: TreeScan, after: TreeScan): string[] {
  return [...after.entries]
    .filter(([r, e]) => !r.includes("/") && e.kind !== "dir" && !before.entries.has(r))
    .map(([r]) => r);
}

async function finishGuard(
  workdir: string,
  s: {
    before: TreeScan;
    ignored: Set<string>;
    named: string[];
    /** The workdir is on PATH: a new file directly in it shadows a command. */
    onPath: boolean;
    /** Folders a protected Python command imports from first (workdir-relative). */
    importRoots: ReadonlySet<string>;
    /** The module names a new module there shadows (null: every one). */
    pyNames: ReadonlySet<string> | null;
    manifests: ManifestWatch;
    hostOnly: ReadonlyMap<string, string>;
    quarantine: () => string;
  },
): Promise<TreeVerdict> {
  let judged: Tampered | null = null;
  let unfinished: string | null = null;
  let after: TreeScan | null = null;
  let keys: string[] = [];
  let keysLeft: string[] = [];
  try {
    after = await scanTree(workdir, { ignored: s.ignored });
    dropBytecode(workdir, jobBytecode(s.before.entries, after.entries));
    const named = [
      ...s.named,
      ...(s.onPath ? newTopFiles(s.before, after) : []),
      ...newPythonModules(workdir, { before: s.before.entries, after: after.entries }, s.importRoots, s.pyNames),
      ...newToolManifests(workdir, s.before, after, s.ignored),
    ];
    judged = judgeTree(s.before, after, { named, hostOnly: s.hostOnly, quarantine: s.quarantine });
  } catch (e) {
    // Fail closed: a check that could not finish is a tamper, never a pass.
    unfinished = e instanceof Error ? e.message.slice(0, 300) : String(e);
  } finally {
    ({ keys, keysLeft } = restoreManifestParts(workdir, s.manifests, after, s.ignored));
  }
  const changes = summarizeChanges(s.before, after ?? s.before, s.ignored);
  const changed = [...(judged?.changed ?? []), ...keys.map((k) => `${k} (restored)`), ...keysLeft];
  if (unfinished) changed.push(`(dl could not finish its check of the work tree: ${unfinished})`);
  if (changed.length === 0) return { tamper: null, changes };
  return {
    tamper: { failureKind: "jail_git_tampered", message: tamperMessage(changed, judged, unfinished), changed },
    changes,
  };
}

function tamperMessage(changed: string[], judged: Tampered | null, unfinished: string | null): string {
  const where = judged?.quarantine ? `; moved out of the workdir to ${judged.quarantine}` : "";
  const left = judged?.remaining.length
    ? ` dl could not move ${judged.remaining.join(", ")} out of the work tree; do not run git there before you remove it.`
    : unfinished
      ? " dl could not finish checking the work tree, so what the job planted may still be there; do not run git there before you review it."
      : "";
  return `the job wrote git metadata or tool configuration that the host would run or obey (${changed.join(", ")})${where}.${left} Delegates edit the work tree; they do not commit. Its other changes are kept: review them before you commit or run anything.`;
}
