import { READ_BESIDE_SETTINGS, SETTINGS } from "../../src/config.ts";
import type { Leaf } from "../../src/config-fields.ts";
import { MEANINGS } from "./meanings.ts";

/**
 * docs/CONFIGURATION.md's tables, from config.ts. The file is hand-written prose with
 * regions the generator owns:
 *
 *   <!-- generated: gateway backend -->   (top-level keys of SETTINGS, or `beside`)
 *   …a table, rewritten on every run…
 *   <!-- end generated -->
 *
 * Every top-level key of the tree must sit in exactly one region, so a new group of
 * settings cannot be left out of the docs, and every variable needs its sentence in
 * meanings.ts. The prose around the regions is kept as written.
 */

type AnyLeaf = Leaf<unknown, unknown>;
type Row = { env: string; def: string; rule: string };

const isLeaf = (n: object): n is AnyLeaf => "rule" in n && "env" in n;
const isCaps = (n: object): n is { kind: "caps"; leaves: Record<string, AnyLeaf> } => "kind" in n && n.kind === "caps";

function shownDefault(leaf: AnyLeaf): string {
  const d = leaf.def;
  if (d === undefined) return "unset";
  if (d === "" || (Array.isArray(d) && d.length === 0)) return "empty";
  if (typeof d === "boolean") return d ? "`1`" : "`0`";
  return `\`${String(d)}\``;
}

function ruleOf(leaf: AnyLeaf, extra: string[]): string {
  const parts = [leaf.expects, ...extra];
  if (leaf.secret) parts.push("secret: never shown");
  if (leaf.only) parts.push(`read only when \`${leaf.only.env}=${leaf.only.is}\``);
  if (leaf.required) parts.push("required then");
  return parts.join("; ");
}

/** The rows of one node, in the order the tree is written. */
function rowsOf(node: object): Row[] {
  if (isLeaf(node)) return [{ env: node.env, def: shownDefault(node), rule: ruleOf(node, []) }];
  if (isCaps(node)) {
    const { maxConcurrent, maxPerProject } = node.leaves;
    return Object.values(node.leaves).map((leaf) => {
      const extra = leaf === maxPerProject && maxConcurrent ? [`at most \`${maxConcurrent.env}\``] : [];
      return { env: leaf.env, def: shownDefault(leaf), rule: ruleOf(leaf, extra) };
    });
  }
  return Object.values(node).flatMap((n) => rowsOf(n as object));
}

function groupRows(key: string): Row[] {
  if (key === "beside") return READ_BESIDE_SETTINGS.map((v) => ({ env: v.env, def: "", rule: v.expects }));
  const node = (SETTINGS as Record<string, object>)[key];
  if (!node) throw new Error(`docs/CONFIGURATION.md names a settings group "${key}" that config.ts does not have`);
  return rowsOf(node);
}

const cell = (s: string) => s.replace(/\|/g, "\\|");

function table(keys: string[]): string {
  const lines = ["| Variable | Default | Rule | What it does |", "|---|---|---|---|"];
  for (const row of keys.flatMap(groupRows)) {
    const m = MEANINGS[row.env];
    if (!m) throw new Error(`${row.env} has no sentence in scripts/config-doc/meanings.ts`);
    const def = m.shownDefault ?? row.def;
    lines.push(`| \`${row.env}\` | ${cell(def)} | ${cell(row.rule)} | ${cell(m.meaning)} |`);
  }
  return lines.join("\n");
}

const REGION = /<!-- generated: ([\w ]+) -->\n[\s\S]*?<!-- end generated -->/g;

/** Every variable config.ts reads, in or beside the tree. */
export function documentedVariables(): string[] {
  return [...Object.keys(SETTINGS), "beside"].flatMap((k) => groupRows(k).map((r) => r.env));
}

/** The doc with each generated region rewritten from config.ts; throws on a missing or doubled group. */
export function renderConfigurationDoc(current: string): string {
  const seen: string[] = [];
  const out = current.replace(REGION, (_all, names: string) => {
    const keys = names.trim().split(/\s+/);
    seen.push(...keys);
    return `<!-- generated: ${keys.join(" ")} -->\n${table(keys)}\n<!-- end generated -->`;
  });
  for (const key of [...Object.keys(SETTINGS), "beside"]) {
    const n = seen.filter((k) => k === key).length;
    if (n !== 1) throw new Error(`settings group "${key}" is in ${n} generated regions of docs/CONFIGURATION.md`);
  }
  const known = new Set(documentedVariables());
  const stray = Object.keys(MEANINGS).filter((v) => !known.has(v));
  if (stray.length) throw new Error(`meanings.ts describes variables config.ts does not read: ${stray.join(", ")}`);
  return out;
}
