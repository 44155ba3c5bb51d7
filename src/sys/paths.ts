import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { DlError } from "../errors.ts";

/**
 * Every job provider's state dir: the provider name `dl wait` prints, the StatePaths field
 * (also the override's name in PathInputs), the default under $HOME and the variable that
 * overrides it. The defaults are the reference's, so the predecessor's users find their
 * jobs where they expect. A new provider is one line here.
 */
export const JOB_STATE_DIRS = [
  { provider: "codex", field: "codexStateDir", homeDir: ".codex-jobs", env: "DELEGATE_CODEX_STATE_DIR" },
  { provider: "gemini", field: "geminiStateDir", homeDir: ".gemini-jobs", env: "DELEGATE_GEMINI_STATE_DIR" },
  { provider: "dsh", field: "dshStateDir", homeDir: ".dsh-jobs", env: "DELEGATE_DSH_STATE_DIR" },
  { provider: "agent", field: "agentStateDir", homeDir: ".agent-jobs", env: "DELEGATE_AGENT_STATE_DIR" },
] as const;

type JobStateField = (typeof JOB_STATE_DIRS)[number]["field"];

/** One provider's job store, as the watcher, the reaper and the status report read it. */
export interface JobStateDir {
  provider: string;
  stateDir: string;
}

/**
 * Where dl keeps its state, resolved once from the environment facts config.ts gathered.
 * The cache (pool slots) follows the platform convention.
 */
export type PathInputs = {
  platform: NodeJS.Platform;
  cwd: string;
  home: string;
  xdgCacheHome?: string;
  xdgConfigHome?: string;
  codexHome?: string;
  overrides: {
    agentsDir?: string;
    cacheDir?: string;
    dshModelsFile?: string;
  } & Partial<Record<JobStateField, string>>;
  /** DELEGATE_TEST_ISOLATION was present (even empty). */
  isolation: boolean;
  isolationRoot?: string;
};

export type StatePaths = {
  home: string;
  agentsDir: string;
  cacheDir: string;
  slotsDir: string;
  codexHome: string;
  dshModelsFile: string;
  /** Canonical isolation root when the test safety net is on, else null. */
  isolationRoot: string | null;
} & Record<JobStateField, string>;

/**
 * Absolute and canonical even when the path does not exist yet: the deepest existing
 * ancestor is resolved through realpath and the rest appended, so a symlinked parent
 * cannot smuggle a state dir out of its expected place.
 */
export function canonicalPath(p: string, cwd = process.cwd()): string {
  let abs = resolve(cwd, p);
  const rest: string[] = [];
  while (!existsSync(abs)) {
    const parent = dirname(abs);
    if (parent === abs) break;
    rest.unshift(abs.slice(parent.length).replace(/^[/\\]+/, ""));
    abs = parent;
  }
  let base: string;
  try {
    base = realpathSync(abs);
  } catch {
    base = abs;
  }
  return rest.length ? join(base, ...rest) : base;
}

/** True when `child` is `parent` or lies beneath it (both canonical). */
export function isWithin(child: string, parent: string): boolean {
  if (child === parent) return true;
  const p = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(p);
}

export function resolveStatePaths(input: PathInputs): StatePaths {
  const { home, platform, cwd, overrides: o } = input;
  const canon = (p: string) => canonicalPath(p.startsWith("~/") ? join(home, p.slice(2)) : p, cwd);

  const cacheBase =
    platform === "darwin"
      ? join(home, "Library", "Caches")
      : input.xdgCacheHome && isAbsolute(input.xdgCacheHome)
        ? input.xdgCacheHome
        : join(home, ".cache");
  const configBase =
    input.xdgConfigHome && isAbsolute(input.xdgConfigHome) && platform !== "darwin"
      ? input.xdgConfigHome
      : join(home, ".config");

  const cacheDir = canon(o.cacheDir ?? join(cacheBase, "claude-delegate-local"));
  const stateDirs = Object.fromEntries(
    JOB_STATE_DIRS.map((d) => [d.field, canon(o[d.field] ?? join(home, d.homeDir))]),
  ) as Record<JobStateField, string>;
  const paths: StatePaths = {
    home: canon(home),
    agentsDir: canon(o.agentsDir ?? join(home, ".claude", "agents")),
    cacheDir,
    slotsDir: join(cacheDir, "slots"),
    ...stateDirs,
    codexHome: canon(input.codexHome ?? join(home, ".codex")),
    dshModelsFile: canon(o.dshModelsFile ?? join(configBase, "neola-lab", "dsh-models.json")),
    isolationRoot: null,
  };

  if (input.isolation) {
    const rawRoot = input.isolationRoot?.trim() ?? "";
    if (!isAbsolute(rawRoot)) {
      throw new DlError(
        "bad_config",
        `DELEGATE_TEST_ISOLATION_ROOT=${JSON.stringify(rawRoot)} is invalid: expected an absolute path while DELEGATE_TEST_ISOLATION is set`,
      );
    }
    const root = canonicalPath(rawRoot);
    paths.isolationRoot = root;
    // Everything dl may write must sit under the root; refuse to start otherwise.
    const writable: [string, string][] = [
      ["cache dir", paths.cacheDir],
      ...JOB_STATE_DIRS.map((d): [string, string] => [d.env, paths[d.field]]),
      ["CODEX_HOME", paths.codexHome],
    ];
    for (const [name, p] of writable) {
      if (!isWithin(p, root)) {
        throw new DlError(
          "bad_config",
          `${name} resolves outside DELEGATE_TEST_ISOLATION_ROOT while test isolation is on; refusing to touch it`,
          { path: p },
        );
      }
    }
  }
  return paths;
}

/**
 * Directories no delegated work may touch: every provider's job state, both where it is
 * now and at its default place (an override does not stop older servers, or another
 * config, from keeping jobs there), and the cache that holds the pool slots. A workdir
 * inside one (or holding one) could rewrite queues, locks or other jobs' files.
 */
export function protectedDirs(p: StatePaths): string[] {
  const defaults = JOB_STATE_DIRS.map((d) => canonicalPath(join(p.home, d.homeDir)));
  const current = jobStateDirs(p).map((s) => s.stateDir);
  return [...new Set([...current, ...defaults, p.cacheDir])];
}

/**
 * The variable that places a dir of protectedDirs(p), so a refusal can name the setting
 * behind it: the cache's, a provider's state dir's (where it is now, or its default under
 * HOME, which that variable would have moved).
 */
export function protectedDirVariable(p: StatePaths, dir: string): string {
  if (dir === p.cacheDir) return "DELEGATE_CACHE_DIR";
  const d = JOB_STATE_DIRS.find((s) => p[s.field] === dir || canonicalPath(join(p.home, s.homeDir)) === dir);
  return d?.env ?? "HOME";
}

/** The protected dir `dir` overlaps (inside it, or holding it), or undefined. Both canonical. */
export function overlappingDir(dir: string, protectedList: readonly string[]): string | undefined {
  return protectedList.find((d) => isWithin(dir, d) || isWithin(d, dir));
}

/** Every provider's job store, with the overrides applied: what `dl wait`, `dl reap` and `dl status` read. */
export function jobStateDirs(p: StatePaths): JobStateDir[] {
  return JOB_STATE_DIRS.map((d) => ({ provider: d.provider, stateDir: p[d.field] }));
}
