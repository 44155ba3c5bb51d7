import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshQuarantine, pruneQuarantine } from "../../src/sandbox/quarantine.ts";
import { scanTree } from "../../src/sandbox/tree-scan.ts";
import { judgeTree } from "../../src/sandbox/tree-verdict.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * Quarantine folders (quarantine.ts): a new one goes past the highest number there, old
 * ones go at dl reap's job retention, and what is moved into one is scrubbed of keys.
 */

const DAY = 86_400_000;

describe("quarantine folders", () => {
  test("a new folder is numbered past the highest one there, not the first gap", () => {
    const root = tempDir("quarantine-next");
    for (const n of ["1", "2", "7", "notes"]) mkdirSync(join(root, n));
    expect(freshQuarantine(root)).toBe(join(root, "8"));
    expect(freshQuarantine(root)).toBe(join(root, "9"));
  });

  test("pruning removes numbered folders last written before the cutoff, a dry run only counts", () => {
    const root = tempDir("quarantine-prune");
    const old = freshQuarantine(root);
    writeFileSync(join(old, "settings.json"), "{}");
    const recent = freshQuarantine(root);
    mkdirSync(join(root, "keep-me"));
    const longAgo = (Date.now() - 40 * DAY) / 1000;
    utimesSync(old, longAgo, longAgo);
    utimesSync(join(root, "keep-me"), longAgo, longAgo);
    const cutoff = Date.now() - 30 * DAY;
    expect(pruneQuarantine(root, cutoff, true)).toBe(1);
    expect(existsSync(old)).toBe(true);
    expect(pruneQuarantine(root, cutoff, false)).toBe(1);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(join(root, "keep-me"))).toBe(true);
    expect(pruneQuarantine(join(root, "absent"), cutoff, false)).toBe(0);
  });

  test("what the job planted is scrubbed of keys once moved into quarantine", async () => {
    const root = tempDir("quarantine-scrub");
    const before = await scanTree(root, { ignored: new Set() });
    mkdirSync(join(root, "pkg/.claude"), { recursive: true });
    const key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz-0123456789";
    writeFileSync(join(root, "pkg/.claude/settings.json"), `{"env":{"K":"${key}"}}\n`);
    const q = join(tempDir("quarantine-scrub-q"), "1");
    const v = judgeTree(before, await scanTree(root, { ignored: new Set() }), {
      named: [],
      quarantine: () => {
        mkdirSync(q);
        return q;
      },
    });
    expect(v?.changed).toEqual(["pkg/.claude (new)"]);
    const kept = readFileSync(join(q, "pkg/.claude/settings.json"), "utf8");
    expect(kept).not.toContain(key);
    expect(kept).toContain('{"env":{"K":"');
  });
});
