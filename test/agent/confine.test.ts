import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { confinePath } from "../../src/agent/tools/confine.ts";
import { isDlError } from "../../src/errors.ts";
import { tempDir } from "../helpers/dl.ts";

function setup() {
  const root = realpathSync(tempDir("confine"));
  const work = join(root, "work");
  const outside = join(root, "outside");
  mkdirSync(join(work, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "s");
  writeFileSync(join(work, "a.txt"), "a");
  symlinkSync(outside, join(work, "out-link"));
  symlinkSync(join(outside, "secret.txt"), join(work, "secret-link"));
  symlinkSync(join(work, "sub"), join(work, "in-link"));
  symlinkSync(join(outside, "missing"), join(work, "dangling"));
  return { root, work, outside };
}

const escapes = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => null,
    (x) => x,
  );
  return isDlError(e, "path_escape");
};

describe("confinePath", () => {
  test("paths inside resolve, including new files in new folders and links that stay inside", async () => {
    const { work } = setup();
    expect(await confinePath(work, "a.txt", false)).toBe(join(work, "a.txt"));
    expect(await confinePath(work, join(work, "a.txt"), false)).toBe(join(work, "a.txt"));
    expect(await confinePath(work, "new/deeper/f.txt", false)).toBe(join(work, "new", "deeper", "f.txt"));
    expect(await confinePath(work, "sub/../a.txt", false)).toBe(join(work, "a.txt"));
    expect(await confinePath(work, "in-link/x", false)).toBe(join(work, "sub", "x"));
    expect(await confinePath(work, ".", false)).toBe(work);
  });

  test("relative .., absolute and symlink escapes are refused", async () => {
    const { work, outside } = setup();
    expect(await escapes(confinePath(work, "../outside/secret.txt", false))).toBe(true);
    expect(await escapes(confinePath(work, "sub/../../outside", false))).toBe(true);
    expect(await escapes(confinePath(work, join(outside, "secret.txt"), false))).toBe(true);
    expect(await escapes(confinePath(work, "/etc/passwd", false))).toBe(true);
    expect(await escapes(confinePath(work, "out-link/secret.txt", false))).toBe(true);
    expect(await escapes(confinePath(work, "out-link/new-file", false))).toBe(true);
    expect(await escapes(confinePath(work, "secret-link", false))).toBe(true);
    expect(await escapes(confinePath(work, "dangling", false))).toBe(true);
    // A sibling whose name starts like the workdir is still outside.
    mkdirSync(`${work}2`);
    expect(await escapes(confinePath(work, `${work}2/x`, false))).toBe(true);
  });

  test("allowEscape lets everything through; empty paths are bad input", async () => {
    const { work, outside } = setup();
    expect(await confinePath(work, "../outside/secret.txt", true)).toBe(join(outside, "secret.txt"));
    const e = await confinePath(work, "  ", false).catch((x) => x);
    expect(isDlError(e, "bad_input")).toBe(true);
  });
});
