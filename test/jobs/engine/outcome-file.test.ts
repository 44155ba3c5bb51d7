import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readOutcome, reserveOutcome, saveOutcome } from "../../../src/jobs/engine/outcome-file.ts";
import { tempDir } from "../../helpers/dl.ts";
import { makeFifo } from "../../helpers/fifo.ts";

/**
 * The job's child can write its job dir, so what it leaves at outcome.json is hostile: a
 * symlink to a file of the user's must not be overwritten with dl's record, a FIFO must
 * not hold the server. The record lands in a fresh regular file instead.
 */
const rec = { id: "tj-abc", started_at: 7, patch: { status: "done" as const, exit_code: 0 } };

function victim(): string {
  const f = join(tempDir("victim"), "bashrc");
  writeFileSync(f, "export PATH=/usr/bin\n");
  return f;
}

describe("outcome.json with something planted in its place", () => {
  const PLANTS: [string, (path: string, target: string) => void][] = [
    ["a symlink to a user's file", (p, t) => symlinkSync(t, p)],
    ["a FIFO", (p) => makeFifo(p)],
  ];
  for (const [name, plant] of PLANTS) {
    test(`${name}: the record goes to a new regular file, the target is untouched`, async () => {
      const dir = tempDir("outcome");
      const target = victim();
      reserveOutcome(dir);
      const path = join(dir, "outcome.json");
      rmSync(path);
      plant(path, target);
      expect(saveOutcome(dir, rec)).toBe(true);
      expect(readFileSync(target, "utf8")).toBe("export PATH=/usr/bin\n");
      expect(await readOutcome(dir, "tj-abc", 7)).toMatchObject({ status: "done", exit_code: 0 });
    });
  }

  test("a link left by an earlier attempt is removed by the next reserve, not written through", () => {
    const dir = tempDir("outcome");
    const target = victim();
    symlinkSync(target, join(dir, "outcome.json"));
    reserveOutcome(dir);
    expect(readFileSync(target, "utf8")).toBe("export PATH=/usr/bin\n");
    expect(readFileSync(join(dir, "outcome.json"), "utf8").trim()).toBe("");
  });
});
