import type { ArgsDef } from "citty";

/**
 * What the docs name that the code must have: every DELEGATE_* variable, every `dl`
 * command and each flag given to it, every exit code said of a dl command. Only code is
 * read (inline code spans and fenced blocks), where a name is a name and not prose.
 */
export type CodeFacts = {
  /** Every variable dl reads. */
  variables: ReadonlySet<string>;
  /** Families of variables named by a part (DELEGATE_CONCURRENCY_<BUCKET>): their prefixes. */
  families: readonly string[];
  /** Each command's flags (long names, no dashes). */
  commands: ReadonlyMap<string, ReadonlySet<string>>;
  exitCodes: ReadonlySet<number>;
};

/** The code of a Markdown page: fenced blocks' lines and inline code spans, each with its line. */
function codeOf(md: string): { code: string; line: string }[] {
  const out: { code: string; line: string }[] = [];
  const prose = md.replace(/^```[^\n]*\n([\s\S]*?)^```/gm, (_, body: string) => {
    for (const l of body.split("\n")) out.push({ code: l, line: l });
    return "";
  });
  for (const line of prose.split("\n")) for (const m of line.matchAll(/`([^`\n]+)`/g)) out.push({ code: m[1]!, line });
  return out;
}

function variableProblems(code: string, f: CodeFacts): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(/\bDELEGATE_[A-Z0-9_]*[A-Z0-9]?_?/g)) {
    const name = m[0];
    if (f.variables.has(name)) continue;
    // A family or a prefix written as such (DELEGATE_CONCURRENCY_<BUCKET>, DELEGATE_RUN_PROVIDER_*).
    if (f.families.some((p) => name.startsWith(p))) continue;
    if (name.endsWith("_") && [...f.variables].some((v) => v.startsWith(name))) continue;
    out.push(`variable ${name}`);
  }
  return out;
}

const TOP_LEVEL_FLAGS = new Set(["version", "help", "json"]);

/** `dl <command> [args] [--flags]` in one piece of code: the command exists, each flag is its. */
function commandProblems(code: string, line: string, f: CodeFacts): string[] {
  const out: string[] = [];
  // A quoted argument is a value, not flags ("add a --verbose flag"); a typo shown on
  // purpose ("dl stauts" → "did you mean status?") is the point of its line.
  if (/did you mean|unknown command/.test(line)) return [];
  // A shell comment is prose: "# the plugin runs the dl on PATH" names no command.
  const unquoted = code.replace(/"[^"]*"|'[^']*'/g, "ARG").replace(/(^|\s)#.*$/, "");
  // A command ends at a pipe, a list operator or a closing parenthesis.
  for (const segment of unquoted.split(/\||&&|;|\)/)) {
    const m = /(?:^|[\s`(])dl (-{1,2}[a-z][\w-]*|[a-z][\w-]*)((?:\s+\S+)*)/.exec(segment);
    if (!m) continue;
    const [, word, rest = ""] = m;
    if (word!.startsWith("-")) {
      if (!TOP_LEVEL_FLAGS.has(word!.replace(/^-+/, "")) && word !== "-V") out.push(`dl flag ${word}`);
      continue;
    }
    if (word === "help") continue;
    const flags = f.commands.get(word!);
    if (!flags) {
      // Prose in a code span ("dl is", "dl and") is not a command line.
      if (/^[A-Z]|^(is|and|or|the|a)$/.test(word!)) continue;
      out.push(`command dl ${word}`);
      continue;
    }
    for (const fm of rest.matchAll(/(?:^|\s)--(no-)?([a-z][\w-]*)/g)) {
      if (!flags.has(fm[2]!) && fm[2] !== "help") out.push(`flag dl ${word} --${fm[2]}`);
    }
  }
  return out;
}

/**
 * "exit 3", "exits 2", "exit code 1" on a line about a dl command. Table rows are left to
 * their own tests (TROUBLESHOOTING's exit-code table; a failure row may quote a child's 127).
 */
function exitProblems(line: string, f: CodeFacts): string[] {
  if (line.trimStart().startsWith("|") || !/`dl [a-z]|(?:^|\s)dl [a-z-]/.test(line)) return [];
  return [...line.matchAll(/\bexit(?:s| code)? (\d{1,3})\b/g)]
    .map((m) => Number(m[1]))
    .filter((n) => !f.exitCodes.has(n))
    .map((n) => `exit code ${n}`);
}

/** Everything a page names in its code (and, for exit codes, its lines about dl) that the code does not have. */
export function docProblems(md: string, f: CodeFacts): string[] {
  const code = codeOf(md).flatMap((c) => [...variableProblems(c.code, f), ...commandProblems(c.code, c.line, f)]);
  return [...code, ...md.split("\n").flatMap((l) => exitProblems(l, f))];
}

/** A command's flags as the strict parser knows them. */
export function flagsOf(args: ArgsDef): Set<string> {
  const out = new Set<string>();
  for (const [name, d] of Object.entries(args)) {
    if (d.type === "positional") continue;
    out.add(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
  }
  return out;
}
