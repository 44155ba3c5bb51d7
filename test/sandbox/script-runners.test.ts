import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { refusedContent } from "../../src/agent/tools/protect-write.ts";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { globMatches, runnerScripts } from "../../src/sandbox/script-runners.ts";
import { HOST_ENV, noMoves, tree } from "./file-tree.ts";

/**
 * npm-run-all and concurrently run a package.json's scripts by name or by glob
 * (src/sandbox/script-runners.ts): `"lint": "run-s lint:*"` that a hook's `npm run lint`
 * runs makes every `lint:*` script the hook's program, one a job adds too.
 */

const ENV = HOST_ENV;
const names = (text: string) => runnerScripts(text).filter((n) => !/^(pre|post)/.test(n));

describe("runnerScripts", () => {
  test("npm-run-all, run-s, run-p and concurrently's npm: names, globs kept", () => {
    const cases: [string, string[]][] = [
      ["run-s lint:* test", ["lint:*", "test"]],
      ["npm-run-all --parallel 'watch:*' --max-parallel 2", ["watch:*"]],
      ['run-p -l "build:**"', ["build:**"]],
      ['concurrently -n a,b "npm:lint:*" "npm:test" "tsc -w"', ["lint:*", "test"]],
      ["npx npm-run-all clean build && echo done", ["clean", "build"]],
    ];
    for (const [text, want] of cases) expect({ text, got: names(text) }).toEqual({ text, got: want });
    expect(runnerScripts("run-s lint")).toEqual(["lint", "prelint", "postlint"]);
    expect(names("npm run lint && echo run-s")).toEqual([]);
  });

  test("a glob matches across its separators, never fewer names than the runner's", () => {
    expect(globMatches("lint:*", "lint:js")).toBe(true);
    expect(globMatches("lint:*", "lint:evil:deep")).toBe(true);
    expect(globMatches("lint:*", "lintx")).toBe(false);
    expect(globMatches("lint.*", "lintXjs")).toBe(false);
  });
});

describe("a hook's npm run lint, whose lint is run-s lint:*", () => {
  const files = {
    ".husky/pre-commit": "npm run lint\n",
    "package.json": JSON.stringify({
      name: "app",
      scripts: { lint: "run-s lint:*", "lint:js": "eslint .", build: "tsc" },
    }),
  };

  test("after a job: a lint:* script added or changed is put back; another script stays", async () => {
    const w = tree(files);
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: noMoves });
    const scripts = {
      lint: "run-s lint:*",
      "lint:js": "eslint . --fix",
      "lint:evil": "sh x",
      build: "tsc",
      dev: "vite",
    };
    await Bun.write(join(w, "package.json"), JSON.stringify({ name: "app", scripts }));
    const verdict = await guard.finish();
    expect(verdict.tamper?.changed).toEqual(["package.json#scripts.lint:* (restored)"]);
    const now = (await Bun.file(join(w, "package.json")).json()) as { scripts: Record<string, string> };
    expect(now.scripts).toEqual({ lint: "run-s lint:*", "lint:js": "eslint .", build: "tsc", dev: "vite" });
  });

  test("the write tools refuse a new lint:* script; a script of another name is written", async () => {
    const w = tree(files);
    const p = { writable: [], gitEnv: ENV };
    const pkg = (extra: Record<string, string>) =>
      JSON.stringify({ name: "app", scripts: { lint: "run-s lint:*", "lint:js": "eslint .", build: "tsc", ...extra } });
    expect(await refusedContent(w, join(w, "package.json"), pkg({ "lint:evil": "sh x" }), p)).toContain(
      "scripts.lint:*",
    );
    expect(await refusedContent(w, join(w, "package.json"), pkg({ dev: "vite" }), p)).toBeNull();
  });
});
