import type { ArgsDef, CommandMeta } from "citty";
import { colourPreference } from "../config.ts";
import { argsOf, type DlCommand } from "./command.ts";

/**
 * Help text for people. Rendered here rather than by citty, whose colours depend on CI/TEST
 * variables and not on whether anyone is looking: colour only on a terminal, or when
 * FORCE_COLOR asks for it; never with NO_COLOR.
 */
export function colourFor(stream: { isTTY?: boolean }): boolean {
  const pref = colourPreference();
  return pref === "always" || (pref === "auto" && stream.isTTY === true);
}

type Paint = { bold: (s: string) => string; cyan: (s: string) => string; dim: (s: string) => string };

function painter(colour: boolean): Paint {
  const wrap = (on: number, off: number) => (s: string) => (colour ? `\u001b[${on}m${s}\u001b[${off}m` : s);
  return { bold: wrap(1, 22), cyan: wrap(36, 39), dim: wrap(2, 22) };
}

function columns(rows: [string, string][], paint: Paint): string[] {
  const width = Math.max(...rows.map(([l]) => l.length));
  return rows.map(([l, r]) => `  ${paint.cyan(l.padEnd(width))}  ${r}`);
}

function usageLine(name: string, args: ArgsDef, variadic: boolean): string {
  const parts = [`dl ${name}`];
  const entries = Object.entries(args);
  if (entries.some(([, d]) => d.type !== "positional")) parts.push("[flags]");
  const positionals = entries.filter(([, d]) => d.type === "positional");
  positionals.forEach(([n, d], i) => {
    const label = n.toUpperCase() + (variadic && i === positionals.length - 1 ? "…" : "");
    parts.push(d.required === false || d.default !== undefined ? `[${label}]` : label);
  });
  return parts.join(" ");
}

function flagRows(args: ArgsDef): [string, string][] {
  const rows: [string, string][] = [];
  for (const [name, d] of Object.entries(args)) {
    if (d.type === "positional") continue;
    const alias = "alias" in d && d.alias ? (Array.isArray(d.alias) ? d.alias : [d.alias]) : [];
    const short = alias.filter((a) => a.length === 1).map((a) => `-${a}, `);
    const value =
      d.type === "string" ? ` ${d.valueHint ?? "VALUE"}` : d.type === "enum" ? ` ${d.options?.join("|")}` : "";
    rows.push([`${short.join("")}--${name}${value}`, d.description ?? ""]);
  }
  rows.push(["-h, --help", "Show this help"]);
  return rows;
}

export function commandHelp(name: string, cmd: DlCommand, colour: boolean): string {
  const p = painter(colour);
  const meta = (cmd.def.meta ?? {}) as CommandMeta;
  const args = argsOf(cmd);
  const lines = [meta.description ?? "", "", `${p.bold("Usage:")} ${usageLine(name, args, cmd.variadic === true)}`];
  const positionals = Object.entries(args).filter(([, d]) => d.type === "positional");
  if (positionals.length) {
    lines.push("", p.bold("Arguments:"));
    lines.push(
      ...columns(
        positionals.map(([n, d]) => [n.toUpperCase(), d.description ?? ""]),
        p,
      ),
    );
  }
  lines.push("", p.bold("Flags:"), ...columns(flagRows(args), p));
  if (cmd.examples.length) lines.push("", p.bold("Examples:"), ...cmd.examples.map((e) => `  ${p.dim("$")} ${e}`));
  return `${lines.join("\n")}\n`;
}

export function mainHelp(
  version: string,
  commands: readonly { name: string; cmd: DlCommand }[],
  colour: boolean,
): string {
  const p = painter(colour);
  const rows: [string, string][] = commands.map(({ name, cmd }) => [
    name,
    ((cmd.def.meta ?? {}) as CommandMeta).description ?? "",
  ]);
  rows.push(["help [COMMAND]", "Show help for dl or one command"]);
  return `${[
    `dl ${version} — delegate Claude Code sub-agent work to other model backends and coding CLIs`,
    "",
    `${p.bold("Usage:")} dl COMMAND [flags]`,
    "",
    p.bold("Commands:"),
    ...columns(rows, p),
    "",
    p.bold("Flags:"),
    ...columns(
      [
        ["-h, --help", "Show this help"],
        ["-V, --version [--json]", "Print the version, git commit and build target"],
      ],
      p,
    ),
    "",
    p.bold("Examples:"),
    `  ${p.dim("$")} dl status`,
    `  ${p.dim("$")} dl help run`,
    "",
    "Run dl help COMMAND for a command's flags and examples.",
  ].join("\n")}\n`;
}
