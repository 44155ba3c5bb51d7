import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { documentedVariables, renderConfigurationDoc } from "../../scripts/config-doc/render.ts";

/**
 * docs/CONFIGURATION.md is generated from config.ts: it must be exactly what
 * `npm run docs` would write now, and name every DELEGATE_* variable the source reads,
 * including those read beside the settings tree.
 */
const ROOT = resolve(import.meta.dir, "..", "..");
const DOC = join(ROOT, "docs", "CONFIGURATION.md");
const doc = readFileSync(DOC, "utf8");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

describe("docs/CONFIGURATION.md", () => {
  test("is what `npm run docs` writes from config.ts (run it after changing a setting)", () => {
    expect(renderConfigurationDoc(doc)).toBe(doc);
  });

  test("a changed default in a generated table is drift: rendering puts the tree's value back", () => {
    const stale = doc.replace("| `DELEGATE_MAX_BATCH_SIZE` | `4` |", "| `DELEGATE_MAX_BATCH_SIZE` | `5` |");
    expect(stale).not.toBe(doc);
    expect(renderConfigurationDoc(stale)).toBe(doc);
  });

  test("a settings group without a generated region is refused", () => {
    const dropped = doc.replace("<!-- generated: dsh -->", "<!-- dsh -->");
    expect(() => renderConfigurationDoc(dropped)).toThrow(/settings group "dsh" is in 0 generated regions/);
  });

  test("names every DELEGATE_* variable in src/, each in one generated row", () => {
    const named = new Set<string>();
    for (const f of sourceFiles(join(ROOT, "src")))
      for (const m of readFileSync(f, "utf8").matchAll(/\bDELEGATE_[A-Z0-9_]+/g)) named.add(m[0]);
    expect(named.size).toBeGreaterThan(60);
    // DELEGATE_CONCURRENCY_LOCAL and the like are members of the documented family.
    const family = (v: string) => v.startsWith("DELEGATE_CONCURRENCY_") && v !== "DELEGATE_CONCURRENCY_DEFAULT";
    const missing = [...named].filter((v) => !family(v) && !doc.includes(v));
    expect(missing).toEqual([]);
    const rows = documentedVariables();
    for (const v of rows) expect(doc.split(`| \`${v}\` |`).length).toBe(2);
    expect(rows).toContain("DELEGATE_TEST_ISOLATION");
    expect(rows).toContain("DELEGATE_CONCURRENCY_<BUCKET>");
  });
});
