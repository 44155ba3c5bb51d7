import { describe, expect, test } from "bun:test";
import { chownSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readChildFile, readChildFileSync } from "../../src/sys/child-file.ts";
import { tempDir } from "../helpers/dl.ts";
import { makeFifo } from "../helpers/fifo.ts";

/**
 * The bounded reader for files a child wrote, against what a hostile child leaves: each
 * attack is one that froze or bloated `dl serve` (or leaked a file) before the reader.
 */
const CAP = { maxBytes: 1024, over: "refuse" as const };
const SECRET = "SECRET-CONTENT-7Q2";

const isRoot = process.getuid?.() === 0;

describe("readChildFile", () => {
  test.skipIf(!isRoot)("a file of another user is refused, sync and async, and never read", async () => {
    const f = join(tempDir("cf"), "planted.json");
    writeFileSync(f, SECRET);
    chownSync(f, 65534, 65534);
    const want = { ok: false, refusal: "foreign", detail: "belongs to another user (uid 65534)", uid: 65534 } as const;
    expect(await readChildFile(f, CAP)).toEqual(want);
    expect(readChildFileSync(f, 1024)).toEqual(want);
  });

  test("a regular file within the cap is read whole", async () => {
    const f = join(tempDir("cf"), "a.json");
    writeFileSync(f, '{"ok":true}');
    expect(await readChildFile(f, CAP)).toEqual({ ok: true, text: '{"ok":true}', truncated: false });
  });

  test("a missing file is `missing`", async () => {
    expect(await readChildFile(join(tempDir("cf"), "none"), CAP)).toMatchObject({ ok: false, refusal: "missing" });
  });

  test("a FIFO with no writer is refused at once, not waited on", async () => {
    const f = join(tempDir("cf"), "fifo");
    makeFifo(f);
    const t0 = performance.now();
    const r = await readChildFile(f, CAP);
    expect(r).toMatchObject({ ok: false, refusal: "not_regular", detail: "is a FIFO" });
    expect(performance.now() - t0).toBeLessThan(1_000);
  });

  test("a symlink to /dev/zero, or to any readable file, is refused and never read", async () => {
    const dir = tempDir("cf");
    const secret = join(dir, "secret");
    writeFileSync(secret, SECRET);
    symlinkSync("/dev/zero", join(dir, "zero"));
    symlinkSync(secret, join(dir, "leak"));
    for (const name of ["zero", "leak"]) {
      const r = await readChildFile(join(dir, name), CAP);
      expect(r).toMatchObject({ ok: false, refusal: "symlink" });
      expect(JSON.stringify(r)).not.toContain(SECRET);
    }
  });

  test("a device node or a directory is not a regular file", async () => {
    expect(await readChildFile("/dev/zero", CAP)).toMatchObject({
      ok: false,
      refusal: "not_regular",
      detail: "is a device",
    });
    expect(await readChildFile(tempDir("cf"), CAP)).toMatchObject({ ok: false, refusal: "not_regular" });
  });

  test("a file over the cap: refused, cut to its head, or its tail kept", async () => {
    const f = join(tempDir("cf"), "big");
    writeFileSync(f, `${"a".repeat(1024)}${"b".repeat(1024)}`);
    expect(await readChildFile(f, CAP)).toMatchObject({ ok: false, refusal: "too_large" });
    expect(await readChildFile(f, { maxBytes: 1024, over: "head" })).toEqual({
      ok: true,
      text: "a".repeat(1024),
      truncated: true,
    });
    expect(await readChildFile(f, { maxBytes: 1024, over: "tail" })).toEqual({
      ok: true,
      text: "b".repeat(1024),
      truncated: true,
    });
    const exact = join(tempDir("cf"), "exact");
    writeFileSync(exact, "c".repeat(1024));
    expect(await readChildFile(exact, CAP)).toMatchObject({ ok: true, truncated: false });
  });

  test("a huge sparse file costs no more than the cap", async () => {
    const f = join(tempDir("cf"), "sparse");
    writeFileSync(f, "");
    truncateSync(f, 4 * 1024 ** 3);
    const before = process.memoryUsage().rss;
    const r = await readChildFile(f, { maxBytes: 64 * 1024, over: "head" });
    expect(r).toMatchObject({ ok: true, truncated: true });
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });
});

describe("readChildFileSync (small files on a synchronous path)", () => {
  test("a regular file is read; a FIFO, a link or an oversize file is refused without blocking", () => {
    const dir = tempDir("cfs");
    writeFileSync(join(dir, "ok"), "fine");
    makeFifo(join(dir, "fifo"));
    symlinkSync("/dev/zero", join(dir, "zero"));
    writeFileSync(join(dir, "big"), "x".repeat(2048));
    expect(readChildFileSync(join(dir, "ok"), 1024)).toEqual({ ok: true, text: "fine", truncated: false });
    expect(readChildFileSync(join(dir, "fifo"), 1024)).toMatchObject({ ok: false, refusal: "not_regular" });
    expect(readChildFileSync(join(dir, "zero"), 1024)).toMatchObject({ ok: false, refusal: "symlink" });
    expect(readChildFileSync(join(dir, "big"), 1024)).toMatchObject({ ok: false, refusal: "too_large" });
    expect(readChildFileSync("/dev/zero", 1024)).toMatchObject({ ok: false, refusal: "not_regular" });
  });
});
