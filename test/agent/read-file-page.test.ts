/**
 * page() was rewritten for speed (hand-made padding, concatenation); it must format
 * exactly like the straightforward version below, kept here as the reference.
 */
import { expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { page, readFileTool } from "../../src/agent/tools/read-file.ts";
import { READ_FILE_DEFAULTS, type ReadFileSettings } from "../../src/agent/tools/settings.ts";
import { tempDir } from "../helpers/dl.ts";

function referencePage(
  text: string,
  shown: string,
  offset: number,
  limit: number | undefined,
  s: ReadFileSettings,
): string {
  if (text.length === 0) return `[empty file] ${shown}`;
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  if (offset > total) return `[${shown} has ${total} lines; offset ${offset} is past the end]`;
  const want = limit === undefined ? total : Math.min(total, offset - 1 + limit);
  const out: string[] = [];
  let bytes = 0;
  let last = offset - 1;
  for (let i = offset - 1; i < want; i++) {
    let line = lines[i] ?? "";
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.length > s.maxLineChars) line = `${line.slice(0, s.maxLineChars)} … [line cut: ${line.length} chars]`;
    const formatted = `${String(i + 1).padStart(6)}\t${line}`;
    if (out.length > 0 && bytes + formatted.length + 1 > s.maxBytesPerCall) break;
    out.push(formatted);
    bytes += formatted.length + 1;
    last = i + 1;
  }
  const header = `[lines ${offset}-${last} of ${total}] ${shown}`;
  const more = last < total ? `\n[${total - last} more lines: call read_file with offset=${last + 1} to continue]` : "";
  return `${header}\n${out.join("\n")}${more}`;
}

test("page() formats exactly like the reference for varied texts, ranges and budgets", () => {
  const texts = [
    "",
    "\n",
    "a",
    "a\n",
    "a\r\nb\r\n\r\nc",
    "\r",
    "one\n\n\nfour\n\n",
    `${"x".repeat(2500)}\nshort\n${"é".repeat(2001)}\r\n😀${"y".repeat(1999)}`,
    Array.from({ length: 1200 }, (_, i) => `line ${i} ${"z".repeat(i % 97)}`).join("\n"),
  ];
  const settings: ReadFileSettings[] = [
    READ_FILE_DEFAULTS,
    { ...READ_FILE_DEFAULTS, maxBytesPerCall: 100, maxLineChars: 10 },
    { ...READ_FILE_DEFAULTS, maxBytesPerCall: 1 },
  ];
  let n = 0;
  for (const text of texts) {
    for (const s of settings) {
      for (const [offset, limit] of [
        [1, undefined],
        [1, 1],
        [2, 3],
        [5, undefined],
        [1199, 5],
        [5000, 1],
      ] as const) {
        expect(page(text, "f.txt", offset, limit, s)).toBe(referencePage(text, "f.txt", offset, limit, s));
        n++;
      }
    }
  }
  expect(n).toBe(texts.length * settings.length * 6);
});

test("line numbers of 5, 6 and 7 digits are aligned like padStart(6)", () => {
  const text = "l\n".repeat(1_000_010);
  for (const offset of [99_998, 999_998]) {
    const got = page(text, "big", offset, 4, READ_FILE_DEFAULTS);
    expect(got).toBe(referencePage(text, "big", offset, 4, READ_FILE_DEFAULTS));
    expect(got).toContain(offset === 99_998 ? " 99999\tl\n100000\tl" : "999999\tl\n1000000\tl");
  }
});

test("read_file reads small files (sync path), large ones (async path) and size-0 /proc files the same way", async () => {
  const workdir = realpathSync(tempDir("readpaths"));
  mkdirSync(join(workdir, "d"));
  const small = "α\nβ\n".repeat(10);
  const large = `${"w".repeat(99)}\n`.repeat(15_000); // 1.5 MB: over the sync cap
  writeFileSync(join(workdir, "d", "small.txt"), small);
  writeFileSync(join(workdir, "d", "large.txt"), large);
  const ctx = { workdir, allowEscape: false, signal: new AbortController().signal };
  const tool = readFileTool();
  const s = await tool.run({ path: "d/small.txt" }, ctx);
  expect(s.content).toBe(referencePage(small, "d/small.txt", 1, undefined, READ_FILE_DEFAULTS));
  const l = await tool.run({ path: "d/large.txt", offset: 14_999 }, ctx);
  expect(l.content).toBe(referencePage(large, "d/large.txt", 14_999, undefined, READ_FILE_DEFAULTS));
  // A file at the cap is read; one byte over is refused, on both sides of the sync cap.
  for (const cap of [200, 2 * 1024 * 1024]) {
    writeFileSync(join(workdir, "cap.txt"), "c".repeat(cap));
    const capped = readFileTool({ ...READ_FILE_DEFAULTS, maxFileBytes: cap });
    expect((await capped.run({ path: "cap.txt" }, ctx)).is_error).toBe(false);
    writeFileSync(join(workdir, "cap.txt"), "c".repeat(cap + 1));
    expect((await capped.run({ path: "cap.txt" }, ctx)).content).toContain("over the");
  }
  expect((await tool.run({ path: "d" }, ctx)).content).toContain("is a directory");
  // /proc files say size 0 but have content: the reader must go to EOF, not trust fstat.
  const proc = await tool.run({ path: "/proc/self/status" }, { ...ctx, allowEscape: true });
  expect(proc.is_error).toBe(false);
  expect(proc.content).toMatch(/\tName:/);
});

test("read_file refuses a FIFO at once instead of blocking on it", async () => {
  const dir = realpathSync(tempDir("fifo"));
  expect(Bun.spawnSync(["mkfifo", join(dir, "pipe")]).exitCode).toBe(0);
  const out = await readFileTool().run(
    { path: "pipe" },
    { workdir: dir, allowEscape: false, signal: new AbortController().signal },
  );
  expect(out.is_error).toBe(true);
  expect(out.content).toContain("not a regular file");
});
