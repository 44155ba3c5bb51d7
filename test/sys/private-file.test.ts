import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { isDlError } from "../../src/errors.ts";
import {
  createPrivateAppender,
  overwritePrivate,
  privateDir,
  replacePrivate,
  rewritePrivate,
  writeNewPrivate,
} from "../../src/sys/private-file.ts";
import { scrubTree, tightenTree } from "../../src/sys/private-tree.ts";
import { knowSecrets } from "../../src/sys/redact.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * dl's state files and folders (sys/private-file.ts): 0700 folders, tightened when they
 * were left open; 0600 files, never written through a planted link, redacted on the way.
 */
const KEY = "pf-known-value-90210";
knowSecrets([KEY]);
const mode = (p: string) => statSync(p).mode & 0o777;
const isRoot = process.getuid?.() === 0;

function victim(): string {
  const f = join(tempDir("victim"), "bashrc");
  writeFileSync(f, "export PATH=/usr/bin\n");
  return f;
}

const WRITERS: [string, (path: string, text: string) => void][] = [
  ["rewritePrivate", rewritePrivate],
  ["overwritePrivate", (p, t) => overwritePrivate(p, t, t.length)],
  ["writeNewPrivate", writeNewPrivate],
  ["an appender", (p, t) => createPrivateAppender(p).append(t)],
];

describe("private files", () => {
  for (const [name, write] of WRITERS) {
    test(`${name}: never writes through a link planted at its name`, () => {
      const dir = tempDir("pf");
      const target = victim();
      symlinkSync(target, join(dir, "f"));
      expect(() => write(join(dir, "f"), "dl's record\n")).toThrow();
      expect(readFileSync(target, "utf8")).toBe("export PATH=/usr/bin\n");
    });
  }

  test("what they write is redacted and 0600, a file left 0644 included", () => {
    const dir = tempDir("pf");
    for (const [name, write] of WRITERS) {
      const p = join(dir, name);
      if (name === "overwritePrivate" || name === "rewritePrivate") {
        writeFileSync(p, " ".repeat(64));
        chmodSync(p, 0o644);
      }
      write(p, `the key ${KEY} and sk-ant-api03-0123456789abcdefABCDEF`.padEnd(64, " "));
      expect(readFileSync(p, "utf8")).not.toContain(KEY);
      expect(readFileSync(p, "utf8")).not.toContain("0123456789abcdef");
      expect(mode(p)).toBe(0o600);
    }
    replacePrivate(join(dir, "r"), KEY);
    expect(readFileSync(join(dir, "r"), "utf8")).toBe("<redacted>");
    expect(mode(join(dir, "r"))).toBe(0o600);
  });
});

describe("private folders", () => {
  test("a folder made anew is 0700; one left 0755, and every folder up to the root, is tightened", () => {
    const root = join(tempDir("pd"), "state");
    mkdirSync(join(root, "jobs"), { recursive: true });
    chmodSync(root, 0o755);
    chmodSync(join(root, "jobs"), 0o755);
    privateDir(join(root, "jobs", "cx-1"), root);
    for (const d of [root, join(root, "jobs"), join(root, "jobs", "cx-1")]) expect(mode(d)).toBe(0o700);
  });

  test("tightenTree closes what an older dl left open under a state dir, and follows no link", () => {
    const root = tempDir("pd");
    mkdirSync(join(root, "jobs", "cx-1"), { recursive: true });
    writeFileSync(join(root, "jobs", "cx-1", "output.log"), "x");
    chmodSync(join(root, "jobs", "cx-1", "output.log"), 0o644);
    chmodSync(join(root, "jobs", "cx-1"), 0o755);
    const outside = victim();
    chmodSync(outside, 0o644);
    symlinkSync(outside, join(root, "jobs", "link"));
    tightenTree(root);
    expect(mode(join(root, "jobs", "cx-1"))).toBe(0o700);
    expect(mode(join(root, "jobs", "cx-1", "output.log"))).toBe(0o600);
    expect(mode(outside)).toBe(0o644);
  });

  for (const m of [0o755, 0o700])
    test.skipIf(!isRoot)(
      `another user's folder (${m.toString(8)}) is refused whatever its mode, naming it and the fix`,
      () => {
        const root = join(tempDir("pd"), "theirs");
        mkdirSync(root, { mode: m });
        chmodSync(root, m);
        chownSync(root, 65534, 65534);
        let err: unknown;
        try {
          privateDir(join(root, "jobs", "cx-1"), root);
        } catch (e) {
          err = e;
        }
        expect(isDlError(err, "storage")).toBe(true);
        expect((err as Error).message).toBe(
          `${root} belongs to another user (uid 65534), not this user (uid 0): dl keeps its state only in folders and files it owns, whatever their mode; if it is yours, run \`sudo chown -R 0 ${root}\`, else remove it or point dl elsewhere`,
        );
        expect(mode(root)).toBe(m);
        // Nothing was made inside it.
        expect(readdirSync(root)).toEqual([]);
      },
    );

  test.skipIf(!isRoot)("a file of another user's is never written, whatever its mode, by any writer", () => {
    const dir = tempDir("pf");
    for (const [name, write] of WRITERS.filter(([n]) => n === "rewritePrivate" || n === "overwritePrivate")) {
      const p = join(dir, name);
      writeFileSync(p, "theirs".padEnd(64, " "));
      chmodSync(p, 0o600);
      chownSync(p, 65534, 65534);
      expect(() => write(p, "dl's record".padEnd(64, " "))).toThrow("belongs to another user (uid 65534)");
      expect(readFileSync(p, "utf8")).toBe("theirs".padEnd(64, " "));
      expect(statSync(p).uid).toBe(65534);
    }
  });

  test.skipIf(!isRoot)("tightenTree refuses an entry of another user under a state dir, naming it", () => {
    const root = tempDir("pd");
    mkdirSync(join(root, "jobs"), { recursive: true });
    writeFileSync(join(root, "jobs.sqlite-wal"), "");
    chownSync(join(root, "jobs.sqlite-wal"), 65534, 65534);
    expect(() => tightenTree(root)).toThrow(`${join(root, "jobs.sqlite-wal")} belongs to another user (uid 65534)`);
    // Not remembered as done: the next open refuses it again.
    expect(() => tightenTree(root)).toThrow("belongs to another user");
  });

  test("a folder above it that another user could swap it in is refused, naming it and the fix; a sticky one is fine", () => {
    const open = tempDir("pd");
    chmodSync(open, 0o777);
    expect(() => privateDir(join(open, "state", "jobs"))).toThrow(
      `${open} is writable by other users (mode 777, not sticky): they could swap dl's state folder ${join(open, "state", "jobs")} under it; run \`chmod go-w ${open}\``,
    );
    expect(readdirSync(open)).toEqual([]);
    chmodSync(open, 0o1777);
    privateDir(join(open, "state", "jobs"));
    expect(mode(join(open, "state", "jobs"))).toBe(0o700);
  });

  test.skipIf(!isRoot)("a folder above it owned by another user (not root) is refused, whatever its mode", () => {
    const theirs = join(tempDir("pd"), "theirs");
    mkdirSync(theirs, { mode: 0o755 });
    chownSync(theirs, 65534, 65534);
    expect(() => privateDir(join(theirs, "state"), join(theirs, "state"))).toThrow(
      `${theirs} belongs to another user (uid 65534): that user could swap dl's state folder ${join(theirs, "state")} under it`,
    );
    expect(readdirSync(theirs)).toEqual([]);
  });

  test("a link where a private folder should be is refused", () => {
    const dir = tempDir("pd");
    symlinkSync(tempDir("elsewhere"), join(dir, "jobs"));
    expect(() => privateDir(join(dir, "jobs"))).toThrow("is not a directory");
  });
});

describe("what a job's child left", () => {
  test("scrubTree redacts text files in place, removes binary ones holding a key, keeps the rest", () => {
    const dir = tempDir("scrub");
    mkdirSync(join(dir, "out", "sqlite"), { recursive: true });
    writeFileSync(join(dir, "out", "log.txt"), `launcher: using ${KEY}\nok\n`);
    writeFileSync(
      join(dir, "out", "sqlite", "state.sqlite"),
      Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(KEY)]),
    );
    writeFileSync(join(dir, "out", "plain.bin"), Buffer.from([0, 1, 2, 3]));
    writeFileSync(join(dir, "clean.txt"), "nothing secret\n");
    const outside = victim();
    writeFileSync(outside, KEY);
    symlinkSync(outside, join(dir, "link"));
    expect(scrubTree(dir)).toEqual([join(dir, "out", "sqlite", "state.sqlite")]);
    expect(readFileSync(join(dir, "out", "log.txt"), "utf8")).toBe("launcher: using <redacted>\nok\n");
    expect(readFileSync(join(dir, "out", "plain.bin"))).toEqual(Buffer.from([0, 1, 2, 3]));
    expect(readFileSync(join(dir, "clean.txt"), "utf8")).toBe("nothing secret\n");
    expect(readFileSync(outside, "utf8")).toBe(KEY);
  });
});
