import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildTools } from "../../src/agent/tools/index.ts";
import { SEARCH_DEFAULTS } from "../../src/agent/tools/settings.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";
import { tempDir } from "../helpers/dl.ts";

const tools = buildTools({
  bash: { ...defaultAgentSettings().bash, baseEnv: {} },
  search: { ...SEARCH_DEFAULTS, maxListed: 5, maxLineChars: 40 },
});
const ctxFor = (workdir: string) => ({
  workdir: realpathSync(workdir),
  allowEscape: false,
  signal: new AbortController().signal,
});
const call = async (name: string, args: Record<string, unknown>, dir: string) =>
  (await tools.get(name)!.run(args, ctxFor(dir))).content;

describe("search_files and list_files", () => {
  test(".gitignore files nest as in git: a deeper rule wins, negation re-includes, ignored dirs are not entered", async () => {
    const dir = tempDir("ignore");
    mkdirSync(join(dir, "pkg", "gen"), { recursive: true });
    mkdirSync(join(dir, "dist"), { recursive: true });
    mkdirSync(join(dir, ".git", "info"), { recursive: true });
    writeFileSync(join(dir, ".gitignore"), "dist/\n*.log\n");
    writeFileSync(join(dir, ".git", "info", "exclude"), "secret.txt\n");
    writeFileSync(join(dir, "pkg", ".gitignore"), "!keep.log\ngen/\n");
    for (const f of ["dist/a.ts", "pkg/gen/b.ts", "pkg/keep.log", "pkg/drop.log", "pkg/c.ts", "secret.txt", "top.log"])
      writeFileSync(join(dir, f), "hit\n");
    expect(await call("list_files", {}, dir)).toBe(".gitignore\npkg/.gitignore\npkg/c.ts\npkg/keep.log");
    expect(await call("search_files", { pattern: "hit" }, dir)).toBe("pkg/c.ts:1: hit\npkg/keep.log:1: hit");
    // Searching below the workdir still applies the workdir's rules.
    expect(await call("search_files", { pattern: "hit", path: "pkg" }, dir)).toBe(
      "pkg/c.ts:1: hit\npkg/keep.log:1: hit",
    );
    // A path the model names explicitly is searched even if ignored.
    expect(await call("search_files", { pattern: "hit", path: "dist" }, dir)).toBe("dist/a.ts:1: hit");
  });

  test("globs by name or by path; the list and long lines are capped with a note", async () => {
    const dir = tempDir("glob");
    mkdirSync(join(dir, "src", "deep"), { recursive: true });
    for (let i = 0; i < 7; i++) writeFileSync(join(dir, "src", `f${i}.ts`), "x\n");
    writeFileSync(join(dir, "src", "deep", "z.test.ts"), `${"y".repeat(100)}NEEDLE${"y".repeat(100)}\n`);
    writeFileSync(join(dir, "src", "a.md"), "x\n");
    expect(await call("list_files", { glob: "**/*.test.ts" }, dir)).toBe("src/deep/z.test.ts");
    expect(await call("list_files", { glob: "*.md" }, dir)).toBe("src/a.md");
    expect(await call("list_files", { glob: "deep/*", path: "src" }, dir)).toBe("src/deep/z.test.ts");
    const listed = (await call("list_files", { glob: "*.ts" }, dir)).split("\n");
    expect(listed).toHaveLength(6);
    expect(listed[5]).toBe("[list cut: only the first 5 files are shown; narrow the glob or path]");
    const line = await call("search_files", { pattern: "NEEDLE" }, dir);
    expect(line).toStartWith("src/deep/z.test.ts:1: …");
    expect(line).toContain("NEEDLE");
    expect(line).toEndWith("… [line of 206 chars cut]");
  });

  test("a bad pattern, a missing path and an escaping path are errors that say what to do", async () => {
    const dir = tempDir("bad");
    const bad = await tools.get("search_files")!.run({ pattern: "(" }, ctxFor(dir));
    expect(bad.is_error).toBe(true);
    expect(bad.content).toContain("not a valid RE2 regular expression");
    expect(await call("search_files", { pattern: "x", path: "nope" }, dir)).toBe("search_files: nope does not exist");
    expect(await call("list_files", { path: "../.." }, dir)).toContain("outside the working directory");
  });
});

describe("edit_file", () => {
  test("a CRLF file stays CRLF; replace_all changes every match; bytes that are not UTF-8 are refused", async () => {
    const dir = tempDir("edit-unit");
    writeFileSync(join(dir, "w.txt"), "one\r\ntwo\r\none\r\n");
    expect(await call("edit_file", { path: "w.txt", old_string: "two\n", new_string: "2\n3\n" }, dir)).toBe(
      "edited w.txt: 1 replacement; new text at lines 2-3",
    );
    expect(await Bun.file(join(dir, "w.txt")).text()).toBe("one\r\n2\r\n3\r\none\r\n");
    expect(
      await call("edit_file", { path: "w.txt", old_string: "one", new_string: "1", replace_all: "true" }, dir),
    ).toBe("edited w.txt: 2 replacements; new text at lines 1, 4");
    writeFileSync(join(dir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(await call("edit_file", { path: "latin1.txt", old_string: "ca", new_string: "CA" }, dir)).toContain(
      "not valid UTF-8",
    );
    expect(await call("edit_file", { path: "w.txt", old_string: "", new_string: "x" }, dir)).toContain(
      "use write_file",
    );
    expect(await call("edit_file", { path: "nope.txt", old_string: "a", new_string: "b" }, dir)).toContain(
      "does not exist",
    );
  });
});
