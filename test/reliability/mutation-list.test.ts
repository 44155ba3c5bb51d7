import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { MUTATIONS } from "../../scripts/mutation-list.ts";
import { listProblems } from "../../scripts/mutations.ts";

/**
 * The guard-removal list cannot rot silently: every search string must still occur
 * exactly once in its file and every named test file must exist, in every `npm test`
 * (a refactor that moves a guard must move its mutation too). `npm run mutations` runs them.
 */
describe("the mutation list (scripts/mutation-list.ts)", () => {
  test("every entry still applies: its search string occurs once, its tests exist", () => {
    expect(listProblems(resolve(import.meta.dir, "..", ".."), MUTATIONS)).toEqual([]);
  });

  test("at least 40 guards, each explained, and a CI sample drawn from it", () => {
    expect(MUTATIONS.length).toBeGreaterThanOrEqual(40);
    for (const m of MUTATIONS) {
      expect(m.guard.length, m.id).toBeGreaterThan(10);
      expect(m.why.length, m.id).toBeGreaterThan(10);
    }
    const sample = MUTATIONS.filter((m) => m.ci);
    expect(sample.length).toBeGreaterThanOrEqual(8);
    expect(sample.some((m) => m.build)).toBe(false); // the sample stays quick: no rebuild
  });
});
