import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { HOST_ENV, tree as treeOf } from "./file-tree.ts";

/**
 * What the tree guard puts back after a jailed job keeps the mode it had before the job,
 * whatever the umask: a package.json whose keys are restored, a manifest put back whole.
 */
const ENV = HOST_ENV;
const mode = (p: string) => statSync(p).mode & 0o777;
const was = process.umask();
afterEach(() => {
  process.umask(was);
});

const PKG = '{\n  "name": "x",\n  "scripts": { "test": "bun test" },\n  "prettier": {}\n}\n';
const PYPROJECT = '[project]\nname = "app"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n';

async function jobChanges(files: Record<string, [string, number]>, job: (w: string) => void) {
  const w = treeOf(Object.fromEntries(Object.entries(files).map(([p, [t]]) => [p, t])), "put-back-mode");
  for (const [p, [, m]] of Object.entries(files)) chmodSync(join(w, p), m);
  const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: () => join(w, "..", "q") });
  job(w);
  return { w, verdict: await guard.finish() };
}

describe("a file put back keeps its mode", () => {
  test("a 0600 package.json whose tool key the job changed comes back 0600 under umask 0", async () => {
    process.umask(0);
    const { w, verdict } = await jobChanges({ "package.json": [PKG, 0o600] }, (w) =>
      writeFileSync(join(w, "package.json"), PKG.replace('"prettier": {}', '"prettier": "./evil.cjs"')),
    );
    expect(verdict.tamper?.changed).toContain("package.json#prettier (restored)");
    expect(JSON.parse(readFileSync(join(w, "package.json"), "utf8")).prettier).toEqual({});
    expect(mode(join(w, "package.json"))).toBe(0o600);
  });

  test("the mode before the job, not the one the job left: a 0600 package.json the job made 0666 comes back 0600", async () => {
    const { w, verdict } = await jobChanges({ "package.json": [PKG, 0o600] }, (w) => {
      writeFileSync(join(w, "package.json"), PKG.replace('"prettier": {}', '"prettier": "./evil.cjs"'));
      chmodSync(join(w, "package.json"), 0o666);
    });
    expect(verdict.tamper?.changed).toContain("package.json#prettier (restored)");
    expect(mode(join(w, "package.json"))).toBe(0o600);
  });

  test("a 0640 package.json the job swapped for a link comes back whole and 0640 under umask 077", async () => {
    process.umask(0o077);
    const { w, verdict } = await jobChanges({ "package.json": [PKG, 0o640] }, (w) => {
      writeFileSync(join(w, "evil.json"), '{"prettier": "./evil.cjs"}');
      unlinkSync(join(w, "package.json"));
      symlinkSync("evil.json", join(w, "package.json"));
    });
    expect(verdict.tamper?.changed.join(" ")).toContain("package.json");
    expect(readFileSync(join(w, "package.json"), "utf8")).toBe(PKG);
    expect(mode(join(w, "package.json"))).toBe(0o640);
  });

  test("a 0644 pyproject.toml put back whole stays 0644 under umask 077, and a 0600 one 0600 under umask 0", async () => {
    for (const [umask, m] of [
      [0o077, 0o644],
      [0, 0o600],
    ] as const) {
      process.umask(umask);
      const { w, verdict } = await jobChanges({ "pyproject.toml": [PYPROJECT, m] }, (w) =>
        writeFileSync(join(w, "pyproject.toml"), `${PYPROJECT}\n[tool.pylint.main]\ninit-hook = "x"\n`),
      );
      expect(verdict.tamper?.changed).toContain("pyproject.toml#tools' part (restored)");
      expect(mode(join(w, "pyproject.toml"))).toBe(m);
    }
  });
});
