import { type RunOptions, type RunResult, runGroup } from "../sys/process.ts";

/**
 * The module names a Python interpreter finds somewhere other than a project's folder,
 * asked of the interpreter itself: its standard library, its built-in modules and every
 * top-level name of its site folders (run from `/`, whose entry on its path is skipped). A new module of one of these names in a folder the interpreter
 * imports from first replaces the one it would have imported; a module of any other name
 * is the project's own, which nothing protected imports (python-imports.ts).
 */

/**
 * Every name found in the interpreter's own folders (site folders, the user's too: `-E`
 * drops only PYTHON* variables), not only what pkgutil lists: a folder without
 * `__init__.py` is a namespace package (`google`, `lazr`), listed as `ns:<name>`, which a
 * new folder of the same name joins rather than loses to.
 */
const CODE = [
  "import sys,os,pkgutil",
  "names=set(getattr(sys,'stdlib_module_names',()))|set(sys.builtin_module_names)",
  "ns=set()",
  "cwd=os.getcwd()",
  "for d in sys.path:",
  "  if d in ('',cwd): continue",
  "  if not os.path.isdir(d):",
  "    names.update(m.name for m in pkgutil.iter_modules([d])); continue",
  "  for n in os.listdir(d):",
  "    p=os.path.join(d,n)",
  "    if os.path.isdir(p) and not os.path.exists(os.path.join(p,'__init__.py')): ns.add(n)",
  "    else: names.add(n.split('.')[0])",
  "print('\\n'.join(sorted(names)+['ns:'+n for n in sorted(ns-names)]))",
].join("\n");
const TIMEOUT_MS = 5_000;
/** Answers kept this long: a package installed later is a name a new module may shadow too. */
const KEEP_MS = 60_000;
const asked = new Map<string, { at: number; names: Promise<Set<string> | null> }>();

/**
 * The names every one of `interpreters` imports from elsewhere, together; null when one
 * of them could not be asked (not there, no answer): then every new module counts.
 */
async function importableNames(
  interpreters: readonly string[],
  o: { env: Readonly<Record<string, string>>; run?: (opts: RunOptions) => Promise<RunResult> },
): Promise<Set<string> | null> {
  const out = new Set<string>();
  for (const interpreter of new Set(interpreters)) {
    let answer = asked.get(interpreter);
    if (!answer || performance.now() - answer.at > KEEP_MS) {
      answer = { at: performance.now(), names: ask(interpreter, o) };
      asked.set(interpreter, answer);
    }
    const names = await answer.names;
    if (!names) return null;
    for (const n of names) out.add(n);
  }
  return out;
}

async function ask(
  interpreter: string,
  o: { env: Readonly<Record<string, string>>; run?: (opts: RunOptions) => Promise<RunResult> },
): Promise<Set<string> | null> {
  try {
    const r = await (o.run ?? runGroup)({
      argv: [interpreter, "-E", "-c", CODE],
      cwd: "/",
      env: { PATH: o.env.PATH ?? "/usr/bin:/bin" },
      timeoutMs: TIMEOUT_MS,
      stdoutCap: 4 << 20,
    });
    if (r.exitCode !== 0 || r.timedOut) return null;
    return new Set(
      r.stdout
        .text()
        .split("\n")
        .filter((n) => n !== ""),
    );
  } catch {
    return null;
  }
}

/**
 * The names a new module where protected Python commands import from first would shadow:
 * what their interpreters (and python3) import from elsewhere, and what their sources
 * import by name; null (every new module counts) when an interpreter gives no answer.
 */
export async function shadowedNames(
  py: { pythons: readonly string[]; pyNames: readonly string[] },
  o: { env: Readonly<Record<string, string>>; run?: (opts: RunOptions) => Promise<RunResult> },
): Promise<Set<string> | null> {
  const names = await importableNames([...py.pythons, "python3"], o);
  if (names) for (const n of py.pyNames) names.add(n);
  return names;
}
