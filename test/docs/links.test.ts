import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/**
 * The README and docs/ link into each other and into examples/: every relative link must
 * name a file that exists, and every #anchor a heading of that file (GitHub's slugs), so
 * moving a section cannot leave a dead link behind.
 */
const ROOT = resolve(import.meta.dir, "..", "..");
const pages = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith(".md"),
);

/** The text outside fenced code blocks, where a link is a link. */
const prose = (md: string) => md.replace(/^```[\s\S]*?^```/gm, "");

function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
  const heads = [...prose(readFileSync(file, "utf8")).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.trim()));
  return new Set(heads);
}

test("every relative link of the README and docs/ reaches an existing file and heading", () => {
  const dead: string[] = [];
  let checked = 0;
  for (const page of pages) {
    const text = prose(readFileSync(join(ROOT, page), "utf8"));
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      checked++;
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const file = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), path);
      if (!existsSync(file)) dead.push(`${page}: ${target} (no such file)`);
      else if (anchor && statSync(file).isFile() && !anchorsOf(file).has(anchor))
        dead.push(`${page}: ${target} (no such heading)`);
    }
  }
  expect(checked).toBeGreaterThan(40);
  expect(dead).toEqual([]);
});
