import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { readFileTool } from "../../src/agent/tools/read-file.ts";
import { READ_FILE_DEFAULTS, WRITE_FILE_DEFAULTS } from "../../src/agent/tools/settings.ts";
import type { ToolContext } from "../../src/agent/tools/types.ts";
import { writeFileTool } from "../../src/agent/tools/write-file.ts";
import { tempDir } from "../helpers/dl.ts";

function ctx(): ToolContext & { outside: string } {
  const root = realpathSync(tempDir("ftools"));
  const workdir = join(root, "work");
  const outside = join(root, "outside");
  mkdirSync(workdir);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "TOP SECRET\n");
  symlinkSync(outside, join(workdir, "link"));
  return { workdir, outside, allowEscape: false, signal: new AbortController().signal };
}

const read = readFileTool();
const write = writeFileTool({ ...WRITE_FILE_DEFAULTS, maxBytes: 1000 });

describe("read_file", () => {
  test("numbers lines and heads the page with [lines N-M of TOTAL]", async () => {
    const c = ctx();
    writeFileSync(join(c.workdir, "f.txt"), "alpha\nbeta\ngamma\n");
    const r = await read.run({ path: "f.txt" }, c);
    expect(r.is_error).toBe(false);
    expect(r.content).toBe("[lines 1-3 of 3] f.txt\n     1\talpha\n     2\tbeta\n     3\tgamma");
  });

  test("offset and limit read a range and say how to continue", async () => {
    const c = ctx();
    writeFileSync(join(c.workdir, "f.txt"), Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n"));
    const r = await read.run({ path: "f.txt", offset: 10, limit: "5" }, c);
    expect(r.content.split("\n")[0]).toBe("[lines 10-14 of 100] f.txt");
    expect(r.content).toContain("    10\tline 10");
    expect(r.content).not.toContain("line 15");
    expect(r.content).toContain("offset=15");
    expect((await read.run({ path: "f.txt", offset: 101 }, c)).content).toContain("past the end");
    expect((await read.run({ path: "f.txt", offset: 0 }, c)).is_error).toBe(true);
  });

  test("a large file is paged at about 50 KB, and the pages cover it exactly", async () => {
    const c = ctx();
    const lines = Array.from({ length: 5000 }, (_, i) => `${i + 1}:${"x".repeat(60)}`);
    writeFileSync(join(c.workdir, "big.txt"), `${lines.join("\n")}\n`);
    let offset = 1;
    let seen = 0;
    let pages = 0;
    for (;;) {
      const r = await read.run({ path: "big.txt", offset }, c);
      pages++;
      expect(r.content.length).toBeLessThanOrEqual(READ_FILE_DEFAULTS.maxBytesPerCall + 200);
      const m = /^\[lines (\d+)-(\d+) of 5000\]/.exec(r.content);
      expect(m).not.toBeNull();
      expect(Number(m![1])).toBe(offset);
      seen += Number(m![2]) - Number(m![1]) + 1;
      if (Number(m![2]) === 5000) break;
      expect(r.content).toContain(`offset=${Number(m![2]) + 1}`);
      offset = Number(m![2]) + 1;
    }
    expect(seen).toBe(5000);
    expect(pages).toBeGreaterThan(5);
  });

  test("binary, over-size, missing and directory get clear messages", async () => {
    const c = ctx();
    writeFileSync(join(c.workdir, "bin.dat"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    const bin = await read.run({ path: "bin.dat" }, c);
    expect(bin.is_error).toBe(true);
    expect(bin.content).toContain("binary");
    writeFileSync(join(c.workdir, "huge.txt"), "y".repeat(3000));
    const small = readFileTool({ ...READ_FILE_DEFAULTS, maxFileBytes: 1000 });
    const huge = await small.run({ path: "huge.txt" }, c);
    expect(huge.content).toContain("over the");
    expect(huge.content).toContain("run_bash");
    expect((await read.run({ path: "nope.txt" }, c)).content).toContain("does not exist");
    expect((await read.run({ path: "." }, c)).content).toContain("directory");
  });

  test("escapes through .., an absolute path and a symlink are refused", async () => {
    const c = ctx();
    for (const path of ["../outside/secret.txt", join(c.outside, "secret.txt"), "link/secret.txt"]) {
      const r = await read.run({ path }, c);
      expect(r.is_error).toBe(true);
      expect(r.content).toContain("outside the working directory");
      expect(r.content).not.toContain("TOP SECRET");
    }
  });
});

describe("write_file", () => {
  test("creates parents, writes the content, reports size, leaves no temp file", async () => {
    const c = ctx();
    const r = await write.run({ path: "a/b/c.txt", content: "one\ntwo\n" }, c);
    expect(r.is_error).toBe(false);
    expect(r.content).toBe("wrote 8 bytes (2 lines) to a/b/c.txt");
    expect(readFileSync(join(c.workdir, "a/b/c.txt"), "utf8")).toBe("one\ntwo\n");
    expect(readdirSync(join(c.workdir, "a/b"))).toEqual(["c.txt"]);
  });

  test("overwrites atomically (new inode via rename) and keeps the file mode", async () => {
    const c = ctx();
    const f = join(c.workdir, "run.sh");
    writeFileSync(f, "old");
    chmodSync(f, 0o755);
    const before = statSync(f).ino;
    await write.run({ path: "run.sh", content: "#!/bin/sh\necho new\n" }, c);
    expect(readFileSync(f, "utf8")).toBe("#!/bin/sh\necho new\n");
    expect(statSync(f).ino).not.toBe(before);
    expect(statSync(f).mode & 0o777).toBe(0o755);
  });

  test("content over the cap is refused and nothing is written", async () => {
    const c = ctx();
    const r = await write.run({ path: "big.txt", content: "z".repeat(1001) }, c);
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("limit");
    expect(existsSync(join(c.workdir, "big.txt"))).toBe(false);
    expect((await write.run({ path: "x.txt", content: 42 }, c)).is_error).toBe(true);
  });

  test("escapes through .., an absolute path and a symlink are refused and write nothing", async () => {
    const c = ctx();
    for (const path of ["../outside/pwned.txt", join(c.outside, "pwned.txt"), "link/pwned.txt", "link/secret.txt"]) {
      const r = await write.run({ path, content: "pwned" }, c);
      expect(r.is_error).toBe(true);
      expect(r.content).toContain("outside the working directory");
    }
    expect(readdirSync(c.outside)).toEqual(["secret.txt"]);
    expect(readFileSync(join(c.outside, "secret.txt"), "utf8")).toBe("TOP SECRET\n");
  });
});
