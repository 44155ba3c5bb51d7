import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { DlError } from "../errors.ts";

/**
 * One provider's job store as the state paths need it: the provider's name, its default
 * dir under $HOME and the variable that moves it. config.ts passes every provider's
 * (jobs/providers PROVIDERS), so this module names none of them.
 */
type JobStoreSpec<N extends string = string> = {
  readonly name: N;
  readonly homeDir: string;
  readonly stateEnv: string;
};

/** One provider's job store, as the watcher, the reaper and the status report read it. */
/** Where job `id` keeps its files under a provider state dir (the runner's jobDir). */
export function jobDirOf(stateDir: string, id: string): string {
  return join(stateDir, "jobs", id);
}

export interface JobStateDir {
  provider: string;
  stateDir: string;
}

/**
 * Where dl keeps its state, resolved once from the environment facts config.ts gathered.
 * The cache (pool slots) follows the platform convention.
 */
export type PathInputs<N extends string = string> = {
  platform: NodeJS.Platform;
  cwd: string;
  home: string;
  xdgCacheHome?: string;
  xdgConfigHome?: string;
  codexHome?: string;
  claudeConfigDir?: string;
  jobStores: readonly JobStoreSpec<N>[];
  overrides: {
    agentsDir?: string;
    cacheDir?: string;
    dshModelsFile?: string;
    /** A provider's job store moved by its variable. */
    stateDirs?: Partial<Record<N, string>>;
  };
  /** DELEGATE_TEST_ISOLATION was present (even empty). */
  isolation: boolean;
  isolationRoot?: string;
};

export type StatePaths<N extends string = string> = {
  home: string;
  agentsDir: string;
  cacheDir: string;
  slotsDir: string;
  /**
   * Where a delegation in the server (no job folder of its own) keeps what a sandboxed
   * run_bash moved out of its workdir: private, inside the cache no jail can see.
   */
  quarantineDir: string;
  /**
   * Where every `dl serve` records the stores it serves, so a shell without the host's
   * DELEGATE_*_STATE_DIR finds them. Always the default cache place (DELEGATE_CACHE_DIR
   * does not move it): a reader cannot know another process's override.
   */
  storesRegistryDir: string;
  /**
   * Where every `dl serve` records the cache dir (pool slots) it uses, beside the stores
   * registry and for the same reason: `dl status` names a server whose host moved it.
   */
  serversRegistryDir: string;
  codexHome: string;
  /** Claude Code's configuration folder: CLAUDE_CONFIG_DIR, else ~/.claude (sys/claude-home-reads.ts). */
  claudeConfigDir: string;
  dshModelsFile: string;
  /** Canonical isolation root when the test safety net is on, else null. */
  isolationRoot: string | null;
  /** Each provider's job store, with its override applied. */
  stateDirs: Record<N, string>;
  jobStores: readonly JobStoreSpec<N>[];
};

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

/**
 * canonicalPath's strict sibling, for paths a model names: realpath of the deepest
 * existing ancestor, with the missing tail appended, but null for a dangling symlink on
 * the way: where it points cannot be checked, so it is refused.
 * Synchronous on purpose: realpath(3) and lstat are metadata calls of a few µs, where the
 * async versions cost a thread-pool round trip each (about 3x the time per tool call).
 */
export function realpathDeepest(target: string): string | null {
  const tail: string[] = [];
  let cur = target;
  for (;;) {
    try {
      const base = realpathSync.native(cur);
      return tail.length ? join(base, ...tail.reverse()) : base;
    } catch {
      try {
        lstatSync(cur);
        return null; // exists (as a link) but cannot be resolved
      } catch {
        // does not exist: go up
      }
    }
    const parent = dirname(cur);
    if (parent === cur) return null;
    tail.push(cur.slice(parent.length).replace(/^[\\/]+/, ""));
    cur = parent;
  }
}

/** Links the kernel follows at most in one lookup (ELOOP past 40). */
const MAX_LINKS = 40;

/**
 * Where a program's open of `p` lands: canonical, every link on the way followed as the
 * kernel follows it, the last one too even when what it names is absent (a config file
 * `~/.dotgit/gitconfig` whose folder links into a checkout is that checkout's file).
 */
export function landingPath(p: string): string {
  let cur = resolve(p);
  for (let n = 0; n < MAX_LINKS; n++) {
    const at = join(canonicalPath(dirname(cur)), basename(cur));
    let to: string;
    try {
      to = readlinkSync(at);
    } catch {
      return at; // not a link, or absent: the open lands here
    }
    cur = isAbsolute(to) ? resolve(to) : resolve(dirname(at), to);
  }
  return cur;
}

/** A leading `~`, `$HOME` or `${HOME}` of a path as written in a config or a command. */
const HOME_WORD = /^(~|\$HOME|\$\{HOME\})(?=\/|$)/;

/**
 * A path as a host resolves what a config or a command writes: `~/x` (and `$HOME/x`) in
 * the user's home, an absolute path as it is, anything else from `base`. One resolver for
 * git's values (core.hooksPath, include.path) and the folders and files tool configs name,
 * so a home that holds the workdir is seen the same everywhere. Without a home (none
 * known) a `~/` word resolves nowhere real: it names nothing.
 */
export function resolveUserPath(word: string, base: string, home: string | undefined): string {
  if (home !== undefined && HOME_WORD.test(word)) return join(home, word.replace(HOME_WORD, "."));
  return isAbsolute(word) ? resolve(word) : resolve(base, word);
}

/** True when `child` is `parent` or lies beneath it (both canonical). */
export function isWithin(child: string, parent: string): boolean {
  if (child === parent) return true;
  const p = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(p);
}

/** The user's config folder: XDG_CONFIG_HOME when absolute (not on macOS), else ~/.config. */
function configBaseOf(o: { platform: NodeJS.Platform; home: string; xdgConfigHome?: string }): string {
  return o.xdgConfigHome && isAbsolute(o.xdgConfigHome) && o.platform !== "darwin"
    ? o.xdgConfigHome
    : join(o.home, ".config");
}

/**
 * The per-user settings file every dl process reads (and `dl init` writes):
 * ~/.config/dl/settings.env, or under XDG_CONFIG_HOME. Not moved by any DELEGATE_*
 * variable: a process can only agree with the others on a place none of them chose.
 */
export function settingsFilePath(o: { platform: NodeJS.Platform; home: string; xdgConfigHome?: string }): string {
  return join(configBaseOf(o), "dl", "settings.env");
}

/**
 * The test safety net (DELEGATE_TEST_ISOLATION): the root everything dl may write must
 * sit under; anything outside it refuses to start.
 */
function isolatedRoot<N extends string>(input: PathInputs<N>, paths: StatePaths<N>): string {
  const rawRoot = input.isolationRoot?.trim() ?? "";
  if (!isAbsolute(rawRoot)) {
    throw new DlError(
      "bad_config",
      `DELEGATE_TEST_ISOLATION_ROOT=${JSON.stringify(rawRoot)} is invalid: expected an absolute path while DELEGATE_TEST_ISOLATION is set`,
    );
  }
  const root = canonicalPath(rawRoot);
  const writable: [string, string][] = [
    ["cache dir", paths.cacheDir],
    ...input.jobStores.map((d): [string, string] => [d.stateEnv, paths.stateDirs[d.name]]),
    ["CODEX_HOME", paths.codexHome],
    // Last, so a moved state dir or CODEX_HOME is named first (it is the likelier mistake).
    ["stores registry", paths.storesRegistryDir],
    ["servers registry", paths.serversRegistryDir],
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
  return root;
}

export function resolveStatePaths<N extends string>(input: PathInputs<N>): StatePaths<N> {
  const { home, platform, cwd, overrides: o } = input;
  const canon = (p: string) => canonicalPath(p.startsWith("~/") ? join(home, p.slice(2)) : p, cwd);

  const cacheBase =
    platform === "darwin"
      ? join(home, "Library", "Caches")
      : input.xdgCacheHome && isAbsolute(input.xdgCacheHome)
        ? input.xdgCacheHome
        : join(home, ".cache");
  const configBase = configBaseOf(input);

  const cacheDir = canon(o.cacheDir ?? join(cacheBase, "claude-delegate-local"));
  const stateDirs = Object.fromEntries(
    input.jobStores.map((d) => [d.name, canon(o.stateDirs?.[d.name] ?? join(home, d.homeDir))]),
  ) as Record<N, string>;
  const paths: StatePaths<N> = {
    home: canon(home),
    agentsDir: canon(o.agentsDir ?? join(home, ".claude", "agents")),
    cacheDir,
    slotsDir: join(cacheDir, "slots"),
    quarantineDir: join(cacheDir, "quarantine"),
    storesRegistryDir: canon(join(cacheBase, "claude-delegate-local", "stores")),
    serversRegistryDir: canon(join(cacheBase, "claude-delegate-local", "servers")),
    stateDirs,
    jobStores: input.jobStores,
    codexHome: canon(input.codexHome ?? join(home, ".codex")),
    claudeConfigDir: canon(input.claudeConfigDir ?? join(home, ".claude")),
    dshModelsFile: canon(o.dshModelsFile ?? join(configBase, "neola-lab", "dsh-models.json")),
    isolationRoot: null,
  };

  if (input.isolation) paths.isolationRoot = isolatedRoot(input, paths);
  return paths;
}

/**
 * Directories no delegated work may touch: every provider's job state, both where it is
 * now and at its default place (an override does not stop older servers, or another
 * config, from keeping jobs there), and the cache that holds the pool slots. A workdir
 * inside one (or holding one) could rewrite queues, locks or other jobs' files.
 */
export function protectedDirs(p: StatePaths): string[] {
  const defaults = p.jobStores.map((d) => canonicalPath(join(p.home, d.homeDir)));
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
  const d = p.jobStores.find((s) => p.stateDirs[s.name] === dir || canonicalPath(join(p.home, s.homeDir)) === dir);
  return d?.stateEnv ?? "HOME";
}

/** The protected dir `dir` overlaps (inside it, or holding it), or undefined. Both canonical. */
export function overlappingDir(dir: string, protectedList: readonly string[]): string | undefined {
  return protectedList.find((d) => isWithin(dir, d) || isWithin(d, dir));
}

/** Every provider's job store, with the overrides applied: what `dl wait`, `dl reap` and `dl status` read. */
export function jobStateDirs(p: StatePaths): JobStateDir[] {
  return p.jobStores.map((d) => ({ provider: d.name, stateDir: p.stateDirs[d.name] as string }));
}
