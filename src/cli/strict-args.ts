import type { ArgDef, ArgsDef } from "citty";
import { closest } from "./suggest.ts";

/**
 * citty parses leniently: an unknown flag is ignored, a string flag at the end of the
 * line becomes "", and extra words become positionals nobody reads. `dl reap --dryrun`
 * then reaped for real. This check runs before citty on every command, from the same
 * ArgsDef, and names the first problem (with the closest flag when it looks like a typo).
 * null means citty may parse the line.
 */
type Flag = { name: string; def: ArgDef };

/** `--name`, its kebab/camel spellings and `-x` aliases, as typed on a command line. */
function flagTable(args: ArgsDef): Map<string, Flag> {
  const table = new Map<string, Flag>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const kebab = name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const camel = kebab.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const aliases = def.type === "boolean" || def.type === "string" || def.type === "enum" ? def.alias : undefined;
    const spellings = new Set([name, kebab, camel, ...(Array.isArray(aliases) ? aliases : aliases ? [aliases] : [])]);
    for (const s of spellings) table.set(s.length === 1 ? `-${s}` : `--${s}`, { name: kebab, def });
  }
  return table;
}

function unknownFlag(typed: string, table: Map<string, Flag>): string {
  // Suggest the spelling the help shows, not an alias.
  const longs = [...new Set([...table.values()].map((f) => `--${f.name}`))];
  const guess = closest(typed, longs);
  return `unknown flag ${typed}${guess ? `; did you mean ${guess}?` : ""}`;
}

/** The value a string flag takes, or the problem; `i` advances past a separate value. */
function flagValue(
  flag: Flag,
  inline: string | undefined,
  argv: readonly string[],
  i: number,
): { value: string; next: number } | string {
  const value = inline ?? argv[i + 1];
  // "--workdir --json": the next word is a flag, not the value the user forgot.
  if (value === undefined || (inline === undefined && value.startsWith("--"))) return `--${flag.name} needs a value`;
  const options = flag.def.type === "enum" ? flag.def.options : undefined;
  if (options?.length && !options.includes(value))
    return `--${flag.name} must be one of ${options.join(", ")}, not ${JSON.stringify(value.slice(0, 40))}`;
  return { value, next: inline === undefined ? i + 1 : i };
}

/** One token that starts with "-": a problem, or the index of the last token it used. */
function checkFlag(argv: readonly string[], i: number, table: Map<string, Flag>): string | number {
  const tok = argv[i]!;
  const eq = tok.indexOf("=");
  const typed = tok.startsWith("--") && eq > 0 ? tok.slice(0, eq) : tok;
  const inline = typed === tok ? undefined : tok.slice(eq + 1);
  const flag = table.get(typed);
  if (!flag) {
    const negated = typed.startsWith("--no-") ? table.get(`--${typed.slice(5)}`) : undefined;
    if (negated?.def.type === "boolean" && inline === undefined) return i;
    return unknownFlag(typed, table);
  }
  if (flag.def.type === "boolean") {
    if (inline !== undefined && inline !== "true" && inline !== "false") return `--${flag.name} takes no value`;
    return i;
  }
  const v = flagValue(flag, inline, argv, i);
  return typeof v === "string" ? v : v.next;
}

export function argsProblem(argv: readonly string[], args: ArgsDef, variadic = false): string | null {
  const table = flagTable(args);
  const positionals = Object.entries(args).filter(([, d]) => d.type === "positional");
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === "--") {
      words.push(...argv.slice(i + 1));
      break;
    }
    // A lone "-" and negative numbers are values, not flags.
    if (tok.startsWith("-") && tok !== "-" && !/^-\d/.test(tok)) {
      const r = checkFlag(argv, i, table);
      if (typeof r === "string") return r;
      i = r;
      continue;
    }
    words.push(tok);
  }
  const required = positionals.filter(([, d]) => d.required !== false && d.default === undefined);
  if (words.length < required.length) return `missing ${required[words.length]![0].toUpperCase()}`;
  if (words.length > positionals.length && !variadic) {
    const extra = words[positionals.length]!;
    return `unexpected argument ${JSON.stringify(extra.slice(0, 60))}${positionals.length ? "" : " (this command takes no arguments)"}`;
  }
  return null;
}
