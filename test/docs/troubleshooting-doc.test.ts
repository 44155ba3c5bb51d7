import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { EXIT, EXIT_AFTER_SIGNAL } from "../../src/cli/exit.ts";
import { FAILURE_KINDS } from "../../src/errors.ts";
import { WAIT_EXIT } from "../../src/jobs/shell/wait.ts";

/**
 * docs/TROUBLESHOOTING.md explains every failure_kind the source can give a caller (the
 * closed list FAILURE_KINDS in src/errors.ts) and every exit code a command can end with:
 * a kind or code added to src/ without its row here fails this test, and so does a row
 * for a kind dl never gives.
 */
const ROOT = resolve(import.meta.dir, "..", "..");
const doc = readFileSync(join(ROOT, "docs", "TROUBLESHOOTING.md"), "utf8");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const read = (rel: string) => readFileSync(join(ROOT, rel), "utf8");

/** The string literals of a union type alias declared in `source`. */
function unionMembers(source: string, name: string): string[] {
  const decl = new RegExp(`type ${name} =([^;]+);`).exec(source);
  if (!decl) throw new Error(`type ${name} not found`);
  return [...decl[1]!.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]!);
}

function failureKindsInSource(): Set<string> {
  const kinds = new Set<string>();
  for (const f of sourceFiles(join(ROOT, "src")))
    for (const m of readFileSync(f, "utf8").matchAll(/failure_?[kK]ind\s*[:=]\s*"([a-z_]+)"/g)) kinds.add(m[1]!);
  for (const m of read("src/mcp/tool-call.ts").matchAll(/refused\([^;]*?,\s*"([a-z_]+)"\s*\)/g)) kinds.add(m[1]!);
  for (const m of read("src/jobs/providers/codex/classify.ts").matchAll(/kind: "([a-z_]+)"/g)) kinds.add(m[1]!);
  for (const k of unionMembers(read("src/jobs/providers/gemini/output.ts"), "AgyFailureKind")) kinds.add(k);
  return kinds;
}

/** What the source names: the closed list and every literal the scan finds. */
function allKinds(): Set<string> {
  return new Set([...FAILURE_KINDS, ...failureKindsInSource()]);
}

/** agy's own outcome kinds (gemini/output.ts): the doc explains how a job shows them, as `auth` or `other`. */
const AGY_OUTCOME_KINDS = () => unionMembers(read("src/jobs/providers/gemini/output.ts"), "AgyFailureKind");

/** The kinds the doc's failure_kind tables have a row for (the first cell of a row under a `failure_kind` heading). */
function documentedKinds(): Set<string> {
  const kinds = new Set<string>();
  for (const table of doc.split("\n\n").filter((b) => b.startsWith("| `failure_kind` |")))
    for (const m of table.matchAll(/^\| `([a-z_]+)` \|/gm)) kinds.add(m[1]!);
  kinds.delete("failure_kind");
  return kinds;
}

describe("docs/TROUBLESHOOTING.md", () => {
  test("explains every failure_kind in src/", () => {
    const kinds = allKinds();
    // The scan must see the kinds it is meant to: a broken pattern would pass vacuously.
    for (const k of ["workdir_forbidden", "invalid_arguments", "jail_git_tampered", "not_owner", "quota"])
      expect(kinds).toContain(k);
    const missing = [...kinds].filter((k) => !doc.includes(`\`${k}\``));
    expect(missing).toEqual([]);
    // Every kind written in src/ is one of the closed list (or agy's own, which a job shows as another).
    const agy = AGY_OUTCOME_KINDS();
    const literals = [...failureKindsInSource()];
    expect(literals.filter((k) => !(FAILURE_KINDS as readonly string[]).includes(k) && !agy.includes(k))).toEqual([]);
  });

  test("its failure_kind tables have a row for each kind of the closed list, and for no other", () => {
    const rows = documentedKinds();
    expect(rows.size).toBeGreaterThan(30);
    expect(FAILURE_KINDS.filter((k) => !rows.has(k))).toEqual([]);
    expect([...rows].filter((k) => !(FAILURE_KINDS as readonly string[]).includes(k))).toEqual([]);
  });

  test("has a row for every exit code of every command", () => {
    const codes = new Set([...Object.values(EXIT), ...Object.values(WAIT_EXIT), ...Object.values(EXIT_AFTER_SIGNAL)]);
    const section = doc.slice(doc.indexOf("## Exit codes"), doc.indexOf("## Other symptoms"));
    const missing = [...codes].filter((c) => !section.includes(`| \`${c}\` |`));
    expect(missing).toEqual([]);
  });
});
