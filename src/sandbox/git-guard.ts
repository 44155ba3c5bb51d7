import { resolve } from "node:path";
import { isWithin } from "../sys/paths.ts";
import { type RunOptions, type RunResult, runGroup } from "../sys/process.ts";
import type { JailPolicy } from "./policy.ts";

/**
 * Refuses a workdir whose git config points at a local path the jail does not show: an
 * upstream or remote like `/home/me/main` or `file:///…`. Inside the jail git would fail
 * on it in confusing ways, and outside (when the user later pushes or fetches) it is a
 * bridge from what the job wrote to a checkout the job was never meant to reach.
 */

export const JAIL_GIT_HINT = "git branch --unset-upstream";

interface GitConfigEntry {
  key: string;
  value: string;
}

export type GitGuardResult =
  | { ok: true /** false when git could not be asked (not a repository, no git). */; checked: boolean }
  | {
      ok: false;
      failure_kind: "jail_git_config";
      hint: typeof JAIL_GIT_HINT;
      message: string;
      offending: GitConfigEntry[];
    };

export interface GitGuardOptions {
  env: Readonly<Record<string, string>>;
  run?: (opts: RunOptions) => Promise<RunResult>;
}

const CONFIG_PATTERN = "^(remote\\..*\\.(url|pushurl)|branch\\..*\\.remote)$";

/** `git config -z` prints `key\nvalue\0` per entry. */
function parseConfigZ(text: string): GitConfigEntry[] {
  return text
    .split("\0")
    .filter((e) => e.length > 0)
    .map((e) => {
      const nl = e.indexOf("\n");
      return nl < 0 ? { key: e, value: "" } : { key: e.slice(0, nl), value: e.slice(nl + 1) };
    });
}

/** The local path a remote URL names, or null for a network URL (https://, ssh://, host:path). */
export function localPathOf(value: string, workdir: string): string | null {
  if (/^file:\/\//i.test(value)) return resolve(decodeURIComponent(value.replace(/^file:\/\/[^/]*/i, "")) || "/");
  if (/^[a-z][a-z0-9+.-]*::/i.test(value)) return null; // transport helper (ext::, fd::)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return null;
  const colon = value.indexOf(":");
  const slash = value.indexOf("/");
  if (colon > 0 && (slash < 0 || colon < slash)) return null; // scp-like host:path
  return resolve(workdir, value);
}

/** Entries whose local path lies outside every tree the jail shows. */
function unsafeEntries(entries: GitConfigEntry[], policy: JailPolicy): GitConfigEntry[] {
  const remotes = new Set(
    entries.map((e) => /^remote\.(.+)\.url$/.exec(e.key)?.[1]).filter((n): n is string => n !== undefined),
  );
  const visible = [...policy.writable, ...policy.readOnly];
  return entries.filter((e) => {
    // A branch's remote is usually the name of a remote (checked through its url), or "."
    // (this repository); anything else is a URL or a path of its own.
    if (e.key.startsWith("branch.") && (e.value === "." || remotes.has(e.value))) return false;
    const local = localPathOf(e.value, policy.workdir);
    return local !== null && !visible.some((v) => isWithin(local, v));
  });
}

export async function checkGitConfig(policy: JailPolicy, opts: GitGuardOptions): Promise<GitGuardResult> {
  const run = opts.run ?? runGroup;
  let r: RunResult;
  try {
    r = await run({
      argv: ["git", "config", "-z", "--get-regexp", CONFIG_PATTERN],
      cwd: policy.workdir,
      env: opts.env,
      timeoutMs: 10_000,
    });
  } catch {
    return { ok: true, checked: false }; // no git here: nothing inside the jail can use the config either
  }
  // Exit 1: no entry matches (outside a repository too: git then reads only the global
  // config). Anything else but 0: git refused to read the config at all.
  if (r.exitCode !== 0) return { ok: true, checked: r.exitCode === 1 };
  const offending = unsafeEntries(parseConfigZ(r.stdout.text()), policy);
  if (offending.length === 0) return { ok: true, checked: true };
  const keys = offending.map((e) => e.key).join(", ");
  return {
    ok: false,
    failure_kind: "jail_git_config",
    hint: JAIL_GIT_HINT,
    message: `the workdir's git config points at a local path outside the jail (${keys}): remove it (${JAIL_GIT_HINT}, or git remote remove <name>) and submit again`,
    offending,
  };
}
