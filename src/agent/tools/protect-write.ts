import { readdirSync } from "node:fs";
import { dirname, isAbsolute, relative, sep } from "node:path";
import { askGit } from "../../sandbox/git-reach.ts";
import { foldName, ruleForPath } from "../../sys/protected-names.ts";

/**
 * The jail's principle for the agent's own write tools, which need no jail to plant
 * code: a write_file to `.git/config` (`core.fsmonitor`) runs at the host's next
 * `git status`. So write_file and edit_file refuse, with `path_refused` and the rule
 * named, any path a protect rule covers (git metadata, hook managers' configs, the
 * project's tool configuration; case-folded, after confinePath resolved the links), any
 * path inside a folder git takes for a repository, and any path git's own configuration
 * names (the hooks dir, an fsmonitor script, an included config). Reading stays allowed.
 */

export interface WriteProtection {
  /** DELEGATE_WRITABLE_TOOL_CONFIG: workdir paths a rule names that may be written (never git's). */
  writable: readonly string[];
  /** The allowlisted environment dl's own git questions run with (PATH, HOME). */
  gitEnv: Readonly<Record<string, string>>;
}

/** What git's config names, per workdir, asked at most this often (a write per call would spawn git each time). */
const NAMED_TTL_MS = 5000;
const namedCache = new Map<string, { at: number; paths: Promise<string[]> }>();

function namedByGit(workdir: string, p: WriteProtection): Promise<string[]> {
  const hit = namedCache.get(workdir);
  if (hit && Date.now() - hit.at < NAMED_TTL_MS) return hit.paths;
  const home = p.gitEnv.HOME ?? "/";
  const paths = askGit(workdir, home, { env: p.gitEnv }).then((f) => (f ? [...f.hooksDirs, ...f.named] : []));
  namedCache.set(workdir, { at: Date.now(), paths });
  return paths;
}

/** HEAD, objects/ and refs/ side by side: a folder git takes for a repository. */
function isRepositoryLike(dir: string): boolean {
  try {
    const names = new Set(readdirSync(dir).map(foldName));
    return names.has("head") && names.has("objects") && (names.has("refs") || names.has("commondir"));
  } catch {
    return false;
  }
}

const under = (p: string, root: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/** The refusal's text (`path_refused: … (rule …)`), or null when the write may go ahead. */
export async function refusedWrite(workdir: string, abs: string, p: WriteProtection): Promise<string | null> {
  const rel = relative(workdir, abs);
  const inside = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  const hit = ruleForPath(inside ? rel : abs);
  if (hit && (hit.rule.id === "git-metadata" || !p.writable.includes(hit.at))) {
    return `path_refused: ${inside ? rel : abs} is ${hit.rule.what} (rule ${hit.rule.id}); delegates may not write it, since the host runs or obeys it without asking. Change the work tree's own files instead${hit.rule.id === "git-metadata" ? "" : ", or ask the user to name the path in DELEGATE_WRITABLE_TOOL_CONFIG"}`;
  }
  for (let d = dirname(abs); under(d, workdir) && d !== workdir; d = dirname(d)) {
    if (isRepositoryLike(d)) {
      return `path_refused: ${relative(workdir, d)} is a git repository's own folder (rule git-metadata); delegates may not write inside it`;
    }
  }
  for (const named of await namedByGit(workdir, p)) {
    if (under(abs, named)) {
      return `path_refused: ${inside ? rel : abs} is named by git's configuration (rule git-config: a hooks dir, a program or an included file git runs or reads); delegates may not write it`;
    }
  }
  return null;
}
