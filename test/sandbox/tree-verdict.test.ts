import { describe, expect, test } from "bun:test";
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { entryId, scanTree, type TreeScan } from "../../src/sandbox/tree-scan.ts";
import { judgeTree } from "../../src/sandbox/tree-verdict.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * The verdict after a job (tree-verdict.ts) on real trees: an original the job moved away
 * is put back once the job's own entry in its place is moved out, and a new entry on an
 * inode the job freed is never taken for the original.
 */

const scan = (root: string) => scanTree(root, { ignored: new Set() });
const quarantineOf = (root: string) => () => {
  const q = join(root, "..", `q-${Math.random().toString(36).slice(2)}`);
  mkdirSync(q);
  return q;
};

describe("judgeTree", () => {
  test("a named script whose folder was renamed away is put back, the job's one moved out", async () => {
    const root = tempDir("verdict");
    mkdirSync(join(root, "scripts"));
    writeFileSync(join(root, "scripts/fmt.sh"), "exit 0\n");
    const before = await scan(root);
    renameSync(join(root, "scripts"), join(root, "scripts-old"));
    mkdirSync(join(root, "scripts"));
    writeFileSync(join(root, "scripts/fmt.sh"), "echo planted\n");
    const v = judgeTree(before, await scan(root), { named: ["scripts/fmt.sh"], quarantine: quarantineOf(root) });
    expect(v?.changed).toEqual(["scripts/fmt.sh (replaced)", "scripts/fmt.sh (moved to scripts-old/fmt.sh)"]);
    expect(readFileSync(join(root, "scripts/fmt.sh"), "utf8")).toBe("exit 0\n");
  });

  test("the birth time tells a new entry on a freed inode from the original", () => {
    expect(entryId({ dev: 1, ino: 7, birthtimeMs: 100 })).not.toBe(entryId({ dev: 1, ino: 7, birthtimeMs: 200 }));
    // And on this machine's file system, where a freed inode goes to the next entry made.
    const root = tempDir("verdict-ino");
    symlinkSync("target", join(root, "a"));
    const old = lstatSync(join(root, "a"));
    unlinkSync(join(root, "a"));
    symlinkSync("target", join(root, "b"));
    const now = lstatSync(join(root, "b"));
    expect(now.ino !== old.ino || entryId(now) !== entryId(old)).toBe(true);
  });

  test("without birth times, a new link on the original's inode is not the original moved", async () => {
    const root = tempDir("verdict-nobirth");
    symlinkSync("AGENTS.md", join(root, "CLAUDE.md"));
    const before = await scan(root);
    unlinkSync(join(root, "CLAUDE.md"));
    mkdirSync(join(root, "sub"));
    symlinkSync("../planted-and-longer", join(root, "sub/.mcp.json"));
    const after = await scan(root);
    // As a file system without birth times sees it: the freed inode is the new link's.
    const same = (s: TreeScan, rel: string) => s.ruleEntries.get(rel)!.entry;
    same(after, "sub/.mcp.json").id = same(before, "CLAUDE.md").id;
    const v = judgeTree(before, after, { named: [], quarantine: quarantineOf(root) });
    expect(v?.changed).toEqual(["sub/.mcp.json (new)", "CLAUDE.md (removed)"]);
    expect(() => readlinkSync(join(root, "CLAUDE.md"))).toThrow();
  });
  test("a moved-away original edited to the same size with its mtime set back is not put back", async () => {
    const root = tempDir("verdict-edited");
    mkdirSync(join(root, "scripts"));
    writeFileSync(join(root, "scripts/fmt.sh"), "exit 0\n");
    utimesSync(join(root, "scripts/fmt.sh"), 1_000_000_000, 1_000_000_000);
    const before = await scan(root);
    renameSync(join(root, "scripts"), join(root, "scripts-old"));
    writeFileSync(join(root, "scripts-old/fmt.sh"), "exit 9\n");
    utimesSync(join(root, "scripts-old/fmt.sh"), 1_000_000_000, 1_000_000_000);
    mkdirSync(join(root, "scripts"));
    writeFileSync(join(root, "scripts/fmt.sh"), "echo planted\n");
    const v = judgeTree(before, await scan(root), { named: ["scripts/fmt.sh"], quarantine: quarantineOf(root) });
    expect(v?.changed).toEqual(["scripts/fmt.sh (replaced)"]);
    expect(() => readFileSync(join(root, "scripts/fmt.sh"), "utf8")).toThrow();
    expect(readFileSync(join(root, "scripts-old/fmt.sh"), "utf8")).toBe("exit 9\n");
  });

  test("an original the job moved into a folder it planted is named where it is: in quarantine", async () => {
    const root = tempDir("verdict-into-planted");
    mkdirSync(join(root, "scripts"));
    writeFileSync(join(root, "scripts/fmt.sh"), "exit 0\n");
    const before = await scan(root);
    mkdirSync(join(root, "pkg/.claude"), { recursive: true });
    renameSync(join(root, "scripts"), join(root, "pkg/.claude/scripts"));
    const q = quarantineOf(root);
    const v = judgeTree(before, await scan(root), { named: ["scripts/fmt.sh"], quarantine: q });
    const at = join(v!.quarantine!, "pkg/.claude/scripts/fmt.sh");
    expect(v?.changed).toEqual([
      "pkg/.claude (new)",
      `scripts/fmt.sh (moved by the job into a folder dl moved out: now ${at})`,
    ]);
    expect(readFileSync(at, "utf8")).toBe("exit 0\n");
  });
});
