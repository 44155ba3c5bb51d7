import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { EXIT, EXIT_AFTER_SIGNAL } from "../../src/cli/exit.ts";
import { WAIT_EXIT } from "../../src/jobs/shell/wait.ts";

/**
 * docs/TROUBLESHOOTING.md explains every failure_kind the source can give a caller and
 * every exit code a command can end with: a kind or code added to src/ without its row
 * here fails this test.
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
  const unions: [string, string][] = [
    ["src/errors.ts", "DlErrorCode"],
    ["src/jobs/engine/provider.ts", "FailureClass"],
    ["src/store/types.ts", "FailureKind"],
    ["src/jobs/providers/gemini/output.ts", "AgyFailureKind"],
  ];
  for (const [file, name] of unions) for (const k of unionMembers(read(file), name)) kinds.add(k);
  return kinds;
}

describe("docs/TROUBLESHOOTING.md", () => {
  test("explains every failure_kind in src/", () => {
    const kinds = failureKindsInSource();
    // The scan must see the kinds it is meant to: a broken pattern would pass vacuously.
    for (const k of ["workdir_forbidden", "invalid_arguments", "jail_git_tampered", "not_owner", "quota"])
      expect(kinds).toContain(k);
    const missing = [...kinds].filter((k) => !doc.includes(`\`${k}\``));
    expect(missing).toEqual([]);
  });

  test("has a row for every exit code of every command", () => {
    const codes = new Set([...Object.values(EXIT), ...Object.values(WAIT_EXIT), ...Object.values(EXIT_AFTER_SIGNAL)]);
    const section = doc.slice(doc.indexOf("## Exit codes"), doc.indexOf("## Other symptoms"));
    const missing = [...codes].filter((c) => !section.includes(`| \`${c}\` |`));
    expect(missing).toEqual([]);
  });
});
