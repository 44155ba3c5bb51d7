import { dirname } from "node:path";
import { PROTECT_RULES } from "../sys/protected-names.ts";
import type { JailPolicy } from "./policy.ts";

/**
 * Compiles a JailPolicy to a sandbox-exec profile (SBPL, macOS), generated per run
 * because it names the run's workdir and temporary dir. In SBPL the last matching rule
 * wins, so the profile goes from broad to narrow: deny every read and write, give back
 * stat() everywhere, reads of the listed trees, writes of the writable ones, then take
 * back what must stay closed inside them (git control files, secrets) and the forbidden
 * programs. The git control files are denied whether or not they exist (a rule needs no
 * file), and `.git` and the worktree admin folders cannot be renamed or removed. Everything else (mach services, signals, sysctl, network) stays allowed:
 * agy needs the network and `/usr/bin/security` to read its session from the keychain.
 */

/** A path as an SBPL string literal (policy.ts already refused control characters). */
function quote(p: string): string {
  return `"${p.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function rule(verdict: "allow" | "deny", ops: string, filters: string[]): string[] {
  if (filters.length === 0) return [];
  return [`(${verdict} ${ops}`, ...filters.map((f) => `  ${f}`), ")"];
}

const subpaths = (paths: readonly string[]) => paths.map((p) => `(subpath ${quote(p)})`);
const literals = (paths: readonly string[]) => paths.map((p) => `(literal ${quote(p)})`);

/** A regex of letters made case-insensitive ([gG]), other characters as they are. */
function anyCase(source: string): string {
  return source.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
}

/** Quotes a literal path for an SBPL regex. */
function regexLiteral(p: string): string {
  return p.replace(/[.*+?^${}()|[\]\\"]/g, (c) => `\\${c}`);
}

/**
 * One SBPL regex per protect rule: any path under the workdir with a component of that
 * name (or below it). The rules' patterns use only ERE syntax (groups, `|`, `?`, `.*`).
 */
function protectedNameRegexes(workdir: string): string[] {
  return PROTECT_RULES.map((r) => {
    const names = anyCase(r.names.source.replace(/^\^/, "").replace(/\$$/, ""));
    const under = r.under ? `${anyCase(regexLiteral(r.under))}/` : "";
    // A projectOnly rule: every folder above the entry is one other than node_modules.
    const above = r.projectOnly ? `(${componentOtherThan("node_modules")}/)*` : "(.*/)?";
    return `(regex #"^${regexLiteral(workdir)}/${above}${under}(${names})(/.*)?$")`;
  });
}

/**
 * One path component other than `word`, in ERE (which has no lookahead): one that differs
 * from it at some letter after a common start, a proper start of it, or it and more.
 */
function componentOtherThan(word: string): string {
  const alts: string[] = [];
  for (let i = 0; i < word.length; i++) alts.push(`${regexLiteral(word.slice(0, i))}[^/${word[i]}][^/]*`);
  for (let i = 1; i < word.length; i++) alts.push(regexLiteral(word.slice(0, i)));
  alts.push(`${regexLiteral(word)}[^/]+`);
  return `(${alts.join("|")})`;
}

/**
 * The folders between the workdir and each protected path (`scripts` for scripts/fmt.sh):
 * renamed away (`mv scripts scripts-old`), they take the protected entry with them and
 * leave its place free for the job's own. The workdir itself is not among them.
 */
function ancestorsInside(workdir: string, paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    for (let d = dirname(p); d !== workdir && d.startsWith(`${workdir}/`); d = dirname(d)) out.add(d);
  }
  return [...out].sort();
}

/** Device files any CLI writes to (discarding output, its terminal). */
const DEVICE_WRITES = ["/dev/null", "/dev/zero", "/dev/tty", "/dev/stdout", "/dev/stderr", "/dev/dtracehelper"];

export function sandboxExecProfile(policy: JailPolicy): string {
  const readable = [...policy.systemRead, ...policy.readOnly, ...policy.writable];
  const writable = [...policy.writable];
  const dirs = policy.protectedPaths.filter((p) => p.kind === "dir").map((p) => p.path);
  const files = policy.protectedPaths.filter((p) => p.kind === "file").map((p) => p.path);
  const lines = [
    "(version 1)",
    "(allow default)",
    ";; Reads and writes: closed everywhere, then opened path by path.",
    '(deny file-read* file-write* (subpath "/"))',
    ";; stat() only, no content: `security` finds the keychain only if it may stat ~/Library.",
    ...rule("allow", "file-read-metadata", subpaths(policy.statOnly)),
    ...rule("allow", "file-read*", subpaths(readable)),
    ...rule("allow", "file-write*", subpaths(writable)),
    ...rule("allow", "file-write-data", literals(DEVICE_WRITES)),
    ";; Run or obeyed by the host after the job (git dirs, gitfiles, hooks, tool configuration):",
    ";; read-only even inside the writable workdir, and never renamed, removed or replaced.",
    ...rule("deny", "file-write*", [...subpaths(dirs), ...literals(files)]),
    ";; Nor moved away with a folder above them: those folders cannot be renamed or removed.",
    ...rule("deny", "file-write-unlink", literals(ancestorsInside(policy.workdir, [...dirs, ...files]))),
    ";; And no new entry of a protected name anywhere in the workdir (case-insensitive, as APFS).",
    ...rule("deny", "file-write*", protectedNameRegexes(policy.workdir)),
    ";; Never visible, not even to stat().",
    ...rule("deny", "file-read* file-write*", subpaths(policy.hidden)),
    ";; No opening apps or scripting the desktop (a login page must never open).",
    ...rule("deny", "process-exec", [...literals(policy.denyExec.literal), ...subpaths(policy.denyExec.subpath)]),
  ];
  return `${lines.join("\n")}\n`;
}

/** sandbox-exec's arguments up to the command: append the command's argv. */
export function sandboxExecPrefix(policy: JailPolicy): string[] {
  return ["-p", sandboxExecProfile(policy)];
}
