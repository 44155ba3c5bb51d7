import { DlError } from "./errors.ts";

/**
 * The per-user settings file's format, the one every dl process reads (config.ts) and
 * `dl init` writes: one `NAME=value` per line, the same `DELEGATE_*` names as the
 * environment, `#` starting a comment line, blank lines ignored. The value is the rest
 * of the line, trimmed; one pair of surrounding quotes ('…' or "…") is taken off, so
 * a shell can source the file too. Nothing is expanded.
 */
export type FileSettings = {
  /** The variables the file sets, by name. */
  values: Record<string, string>;
};

const LINE = /^([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/;

function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && (t[0] === '"' || t[0] === "'") && t.at(-1) === t[0]) return t.slice(1, -1);
  return t;
}

/**
 * The file's settings, or a DlError naming the file, the line and what is wrong.
 * `known(name)` says whether a name may be set here (null: yes; else why not).
 */
export function parseSettingsText(text: string, file: string, known: (name: string) => string | null): FileSettings {
  const values: Record<string, string> = {};
  const lineOf = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === "" || raw.startsWith("#")) continue;
    const where = `${file} line ${i + 1}`;
    const m = LINE.exec(raw.replace(/^export\s+/, ""));
    if (!m)
      throw new DlError("bad_config", `${where}: expected NAME=value, e.g. DELEGATE_LOCAL_MODEL=qwen2.5-coder:7b`);
    const name = m[1]!;
    const refusal = known(name);
    if (refusal) throw new DlError("bad_config", `${where}: ${refusal}`, { variable: name });
    const earlier = lineOf.get(name);
    if (earlier !== undefined)
      throw new DlError("bad_config", `${where}: ${name} is set again (first on line ${earlier}); keep one`, {
        variable: name,
      });
    lineOf.set(name, i + 1);
    values[name] = unquote(m[2]!);
  }
  return { values };
}

/**
 * Every `NAME=value` the text sets, whatever else is wrong with it (a line that is no
 * assignment is skipped, a name set twice gives both values): what the redaction must
 * know before the file is checked, so that no refusal of it can print a key it holds.
 */
export function assignmentsAnyway(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = LINE.exec(line.trim().replace(/^export\s+/, ""));
    if (m) out.push([m[1]!, unquote(m[2]!)]);
  }
  return out;
}

/**
 * Why `value` cannot be written as one settings line that reads back as itself, or null:
 * a line break would start a line of its own (another setting), a control character
 * would reach the terminal of whoever prints the file, and surrounding spaces or quotes
 * are taken off on reading. Never quotes the value (it may be a key).
 */
export function settingsValueProblem(value: string): string | null {
  if (/[\p{Cc}\u2028\u2029]/u.test(value)) return "has a line break or a control character";
  if (unquote(value) !== value) return "starts or ends with a space or a quote, which reading takes off";
  return null;
}

/**
 * The file's text with `updates` applied: a line already setting a name is replaced in
 * place (comments and other lines are kept), new names are appended; `header` opens a
 * new file.
 */
export function updateSettingsText(old: string | null, updates: Record<string, string>, header: string): string {
  for (const [name, value] of Object.entries(updates)) {
    const problem = settingsValueProblem(value);
    if (problem) throw new DlError("bad_input", `${name} not written: its value ${problem}`, { variable: name });
  }
  const pending = new Map(Object.entries(updates));
  const lines = old === null ? header.split("\n") : old.replace(/\n$/, "").split("\n");
  const out = lines.map((line) => {
    const m = LINE.exec(line.trim().replace(/^export\s+/, ""));
    const name = m?.[1];
    if (!name || !pending.has(name)) return line;
    const value = pending.get(name)!;
    pending.delete(name);
    return `${name}=${value}`;
  });
  for (const [name, value] of pending) out.push(`${name}=${value}`);
  return `${out.join("\n")}\n`;
}
