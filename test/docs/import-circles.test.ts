import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * No import circle anywhere in src/, type-only imports included: a circle of types is
 * still two files that cannot be read, moved or tested one without the other (and
 * `knip --cycles` does not see type-level ones). Read from the source text, as the
 * structure is drawn: every relative `from "…"` and `import("…")`.
 */
const SRC = resolve(import.meta.dir, "../../src");

function sourceFiles(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => join(SRC, f));
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm)];
  return specs.map((m) => resolve(dirname(file), m[1]!));
}

/** Tarjan's strongly connected components with more than one file (or a file importing itself). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      part.push(relative(SRC, w));
    } while (w !== v);
    if (part.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("src/ imports", () => {
  const graph = new Map(sourceFiles().map((f) => [f, importsOf(f)]));

  test("are read: the graph has the files and their arrows", () => {
    expect(graph.size).toBeGreaterThan(100);
    const arrows = [...graph.values()].reduce((n, a) => n + a.length, 0);
    expect(arrows).toBeGreaterThan(graph.size);
  });

  test("form no circle, type-only imports included", () => {
    expect(circles(graph)).toEqual([]);
  });

  test("a circle is found when there is one (the check itself)", () => {
    const a = join(SRC, "a.ts");
    const b = join(SRC, "b.ts");
    const c = join(SRC, "c.ts");
    expect(
      circles(
        new Map([
          [a, [b]],
          [b, [a]],
          [c, [a]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts"]]);
  });
});
