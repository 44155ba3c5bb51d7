import { readRegularHead } from "../sys/file-head.ts";
import { gitConfigText } from "./git-config-text.ts";

/** git's own limit on nested includes (config.c MAX_INCLUDE_DEPTH). */
const MAX_DEPTH = 10;
const MAX_BYTES = 256 * 1024;

type Entry = { origin: string | null; key: string; value: string };
type Named = { hooksDirs: string[]; named: string[]; includes: string[]; configFiles: string[] };

/**
 * The entries of a config file as git reads them (`section[.subsection].key`, lower case as
 * `git config --list` prints them, values parsed by gitConfigText), from its text.
 */
function configFileEntries(file: string): Entry[] {
  const text = readRegularHead(file, MAX_BYTES);
  if (text === null) return [];
  const out: Entry[] = [];
  let section = "";
  for (const line of gitConfigText(text).split("\n")) {
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header) {
      section = (header[2] === undefined ? header[1]! : `${header[1]}.${header[2]}`).toLowerCase();
      continue;
    }
    const kv = /^\s*([A-Za-z][\w-]*)\s*= ?(.*)$/.exec(line);
    if (kv && section) out.push({ origin: file, key: `${section}.${kv[1]!.toLowerCase()}`, value: kv[2]! });
  }
  return out;
}

/**
 * What the include files git did not read name, as git will read them once their
 * condition holds. `git config --list` reads an `includeIf` only while its condition is
 * true (`onbranch:main` is false while a rebase has HEAD detached, `gitdir:` elsewhere),
 * so the file's own includes and values were never asked about; `rebase --continue` puts
 * the branch back and the next `git status` reads them. Each such file is read from its
 * text, its includes followed to git's depth, and what it names joins `found`.
 */
export function withUnreadIncludes(found: Named, nameAll: (entries: Entry[]) => Named): Named {
  const read = new Set(found.configFiles);
  const out = { ...found };
  let todo = found.includes.filter((f) => !read.has(f));
  for (let depth = 0; depth < MAX_DEPTH && todo.length > 0; depth++) {
    for (const f of todo) read.add(f);
    const more = nameAll(todo.flatMap(configFileEntries));
    for (const k of ["hooksDirs", "named", "includes", "configFiles"] as const)
      out[k] = [...new Set([...out[k], ...more[k]])];
    todo = more.includes.filter((f) => !read.has(f));
  }
  return out;
}
