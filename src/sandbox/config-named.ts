import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isWithin } from "../sys/paths.ts";

/**
 * The files of the work tree that a protected configuration runs: a Claude Code hook's
 * `sh ./scripts/fmt.sh`, an `.mcp.json` server's `node tools/mcp.js`, husky's
 * `.husky/pre-commit` calling `scripts/check.sh`, a pre-commit `repo: local` entry's
 * `./scripts/lint.sh`. The configuration is read-only to delegates, so the script it names
 * must be too, or a delegate rewrites the script instead and the host runs it all the same.
 *
 * Read from the text of every file of the protected entry, whatever its format (JSON,
 * YAML, TOML, shell): each word that names a regular file of the work tree, resolved
 * against the folder holding the configuration (the project its host tool runs in) and
 * against the configuration file's own folder. A bare word (`hook.js`) counts only when it
 * looks like a program (a script's extension, or executable), so `package.json` in a
 * hook's file pattern does not make the manifest read-only; a path (`./x`, `a/b`,
 * `$CLAUDE_PROJECT_DIR/x`) counts whatever it is. What a named script names in turn is
 * followed too (a few levels). Markdown is read only in its front matter (its body is
 * prose for a model, not commands), and VS Code's `launch.json` not at all (it runs when
 * the user starts a debug session, by choice).
 */

/** Files read per configuration entry, bytes read per file, levels of scripts followed. */
const MAX_FILES = 200;
const MAX_BYTES = 256 * 1024;
const MAX_DEPTH = 3;

const SCRIPT_EXT = /\.(sh|bash|zsh|fish|ksh|js|mjs|cjs|ts|mts|cts|jsx|tsx|py|rb|pl|php|lua|ps1|bat|cmd|exe|jar)$/i;
/** Run only by the user's own choice. */
const USER_RUN = /^launch\.json$/i;

export interface NamedOptions {
  workdir: string;
  /** True for a path git ignores (dependencies, build output): not followed. */
  ignored(abs: string): boolean;
}

/** The leading bytes of a regular file, as text; null for anything else or binary content. */
function readText(path: string): string | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(MAX_BYTES);
    const n = readSync(fd, buf, 0, MAX_BYTES, 0);
    const text = buf.subarray(0, n).toString("utf8");
    return text.includes("\0") ? null : text;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The text a host acts on: a markdown file's front matter only. */
function commandText(path: string): string | null {
  if (USER_RUN.test(basename(path))) return null;
  const text = readText(path);
  if (text === null || !/\.(md|mdc|markdown)$/i.test(path)) return text;
  const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  return front?.[1] ?? "";
}

/** The regular files of an entry (itself, or what a folder holds), without following links. */
function filesOf(entry: string): string[] {
  const out: string[] = [];
  const stack = [entry];
  while (stack.length > 0 && out.length < MAX_FILES) {
    const p = stack.pop()!;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isFile()) out.push(p);
    else if (st.isDirectory()) {
      try {
        for (const n of readdirSync(p)) stack.push(join(p, n));
      } catch {
        // unreadable: nothing in it reaches the host through us either
      }
    }
  }
  return out;
}

/** Words of a command line or config value; a leading `$VAR/` or `${VAR}/` (the project dir a host sets) becomes `./`. */
function commandWords(text: string): string[] {
  return text
    .split(/[\s"'`=,;|&()<>[\]{}]+/)
    .map((w) => w.replace(/^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\//, "./").replace(/[:.]+$/, ""))
    .filter((w) => w.length > 0 && w.length < 4096 && !w.startsWith("-") && !w.includes("://"));
}

function isProgram(word: string, abs: string): boolean {
  if (word.includes("/")) return true;
  if (SCRIPT_EXT.test(word)) return true;
  try {
    return (lstatSync(abs).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The work tree's regular files that `word` names from `bases`. */
function resolveWord(word: string, bases: string[], o: NamedOptions): string[] {
  const out: string[] = [];
  for (const base of bases) {
    const abs = isAbsolute(word) ? resolve(word) : resolve(base, word);
    if (abs === o.workdir || !isWithin(abs, o.workdir) || o.ignored(abs)) continue;
    try {
      if (lstatSync(abs).isFile() && isProgram(word, abs)) out.push(abs);
    } catch {
      // not there: nothing to run
    }
  }
  return out;
}

/**
 * Every regular file of the work tree a protected entry (a config file or folder, at
 * `entry`) names, and what those name in turn; absolute paths, the entry's own files
 * excluded.
 */
export function namedByToolConfig(entry: string, o: NamedOptions): string[] {
  const project = dirname(entry);
  const own = new Set(filesOf(entry));
  const found = new Set<string>();
  let level = [...own];
  for (let depth = 0; depth < MAX_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const file of level) {
      const text = commandText(file);
      if (text === null) continue;
      const bases = [...new Set([project, dirname(file)])];
      for (const w of new Set(commandWords(text))) {
        for (const abs of resolveWord(w, bases, o)) {
          if (own.has(abs) || found.has(abs)) continue;
          found.add(abs);
          next.push(abs);
        }
      }
    }
    level = next;
  }
  return [...found];
}
