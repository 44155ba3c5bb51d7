import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { DlError } from "../errors.ts";

/**
 * Where dl keeps its state, resolved once from the environment facts config.ts gathered.
 * Job state dirs keep the reference's defaults (~/.codex-jobs, ~/.gemini-jobs, ~/.dsh-jobs)
 * so the predecessor's users find their jobs where they expect; the cache (pool slots)
 * follows the platform convention.
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
    codexStateDir?: string;
    geminiStateDir?: string;
    dshStateDir?: string;
    dshModelsFile?: string;
  };
  /** DELEGATE_TEST_ISOLATION was present (even empty). */
  isolation: boolean;
  isolationRoot?: string;
};

export type StatePaths = {
  home: string;
  agentsDir: string;
  cacheDir: string;
  slotsDir: string;
  codexStateDir: string;
  geminiStateDir: string;
  dshStateDir: string;
  codexHome: string;
  dshModelsFile: string;
  /** Canonical isolation root when the test safety net is on, else null. */
  isolationRoot: string | null;
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
  const paths: StatePaths = {
    home: canon(home),
    agentsDir: canon(o.agentsDir ?? join(home, ".claude", "agents")),
    cacheDir,
    slotsDir: join(cacheDir, "slots"),
    codexStateDir: canon(o.codexStateDir ?? join(home, ".codex-jobs")),
    geminiStateDir: canon(o.geminiStateDir ?? join(home, ".gemini-jobs")),
    dshStateDir: canon(o.dshStateDir ?? join(home, ".dsh-jobs")),
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
      ["DELEGATE_CODEX_STATE_DIR", paths.codexStateDir],
      ["DELEGATE_GEMINI_STATE_DIR", paths.geminiStateDir],
      ["DELEGATE_DSH_STATE_DIR", paths.dshStateDir],
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
 * Directories no delegated work may touch: every provider's job state and the cache that
 * holds the pool slots. A workdir inside one (or holding one) could rewrite queues,
 * locks or other jobs' files.
 */
export function protectedDirs(p: StatePaths): string[] {
  return [...jobStateDirs(p), p.cacheDir];
}

/** The protected dir `dir` overlaps (inside it, or holding it), or undefined. Both canonical. */
export function overlappingDir(dir: string, protectedList: readonly string[]): string | undefined {
  return protectedList.find((d) => isWithin(dir, d) || isWithin(d, dir));
}

/** The job state dirs of every provider, for the workdir-overlap guard and the watcher. */
export function jobStateDirs(p: StatePaths): string[] {
  return [p.codexStateDir, p.geminiStateDir, p.dshStateDir];
}
