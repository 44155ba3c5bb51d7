import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { refusedContent } from "../../src/agent/tools/protect-write.ts";
import { namedByToolConfig } from "../../src/sandbox/config-named.ts";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { workspaceScriptsRun } from "../../src/sandbox/workspace-runs.ts";
import { HOST_ENV, noMoves, tree } from "./file-tree.ts";

/**
 * Scripts a command runs across a workspace's packages (src/sandbox/workspace-runs.ts):
 * `pnpm -r lint` in a hook runs the lint of every package.json, one a job adds included.
 */

const ENV = HOST_ENV;
const names = (text: string) => workspaceScriptsRun(text).filter((n) => !/^(pre|post)/.test(n));

describe("workspaceScriptsRun", () => {
  test("each runner's workspace-wide forms name the scripts they run", () => {
    const cases: [string, string[]][] = [
      ["pnpm -r lint", ["lint"]],
      ["pnpm --recursive run test", ["test"]],
      ["pnpm --filter @acme/web lint", ["lint"]],
      ["pnpm -F web... build", ["web...", "build"]], // a word after an option may be its value or the script: both
      ["npm run --loglevel silent build --workspaces --if-present", ["silent", "build"]],
      ["npm rum lint --workspaces", ["lint"]],
      ["npm exec --ws -- npm run --silent --if-present check", ["check"]],
      ["pnpm -r exec npm run lint", ["lint"]],
      ["pnpm m run lint", ["lint"]],
      ["yarn workspaces run lint", ["lint"]],
      ["yarn workspaces foreach -A -j 4 run lint", ["4", "lint"]],
      ["lerna run --concurrency 1 lint", ["1", "lint"]],
      ["lerna exec -- npm run lint", ["lint"]],
      ["npm run lint --workspaces --if-present", ["lint"]],
      ["npm -ws run check", ["check"]],
      ["npm run lint -w @acme/web", ["lint"]],
      ["yarn workspaces foreach -A --parallel run lint", ["lint"]],
      ["yarn workspace web lint", ["lint"]],
      ["bun --filter '*' test", ["test"]],
      ["npx turbo run lint test --filter=web && echo done", ["lint", "test"]],
      ["turbo typecheck", ["typecheck"]],
      ["lerna run lint --stream", ["lint"]],
      ["nx run-many -t lint,test", ["lint", "test"]],
      ["nx affected --target=lint", ["lint"]],
      ["nx run app:build", ["build"]],
      ["nx lint web", ["lint"]],
      ["npx nx test app --watch=false", ["test"]],
    ];
    for (const [text, want] of cases) expect({ text, got: names(text) }).toEqual({ text, got: want });
    expect(workspaceScriptsRun("pnpm -r lint")).toEqual(["lint", "prelint", "postlint"]);
  });

  test("one folder's script, or no script, is no workspace-wide run", () => {
    for (const text of ["npm run lint", "pnpm lint", "yarn test", "npm test", "echo turbo-like", "pnpm install"])
      expect({ text, got: names(text) }).toEqual({ text, got: [] });
  });
});

describe("a hook's pnpm -r lint", () => {
  const files = {
    ".husky/pre-commit": "pnpm -r lint\n",
    "package.json": JSON.stringify({ name: "root", private: true }),
    "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
    "packages/a/package.json": JSON.stringify({ name: "a", scripts: { lint: "node lint.js" } }),
    "packages/a/lint.js": "",
    "packages/b/package.json": JSON.stringify({ name: "b", scripts: { build: "tsc" } }),
    "node_modules/x/package.json": JSON.stringify({ name: "x", scripts: { lint: "node y.js" } }),
  };

  test("every package's lint is watched (there or not), and what it runs is named; installed packages are not the workspace's", () => {
    const w = tree(files);
    const n = namedByToolConfig(join(w, ".husky"), { workdir: w, ignored: () => false });
    const watched = n.npmScripts.map((x) => `${x.pkg.slice(w.length + 1)}#${x.name}`);
    for (const k of ["packages/a/package.json#lint", "packages/b/package.json#lint", "packages/b/package.json#prelint"])
      expect(watched).toContain(k);
    expect(watched.some((k) => k.startsWith("node_modules/"))).toBe(false);
    expect(n.files.map((f) => f.slice(w.length + 1))).toContain("packages/a/lint.js");
    expect(n.wideScripts).toEqual(["lint", "prelint", "postlint"]);
  });

  test("after a job: a lint changed in a package, or in a package.json it added, is put back", async () => {
    const w = tree(files);
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: noMoves });
    await Bun.write(
      join(w, "packages/b/package.json"),
      JSON.stringify({ name: "b", scripts: { build: "tsc", lint: "sh x" } }),
    );
    await Bun.write(
      join(w, "packages/evil/package.json"),
      JSON.stringify({ name: "evil", scripts: { lint: "sh x", dev: "vite" } }),
    );
    const verdict = await guard.finish();
    expect(verdict.tamper?.changed).toEqual([
      "packages/b/package.json#scripts.lint (restored)",
      "packages/evil/package.json#scripts.lint (restored)",
    ]);
    expect(await Bun.file(join(w, "packages/evil/package.json")).json()).toEqual({
      name: "evil",
      scripts: { dev: "vite" },
    });
  });

  test("the write tools refuse a lint in any package.json, a new one too; other scripts are written", async () => {
    const w = tree(files);
    const p = { writable: [], gitEnv: ENV };
    const evil = JSON.stringify({ name: "evil", scripts: { lint: "sh x" } });
    expect(await refusedContent(w, join(w, "packages/evil/package.json"), evil, p)).toContain("scripts.lint");
    const b = JSON.stringify({ name: "b", scripts: { build: "tsc", prelint: "sh x" } });
    expect(await refusedContent(w, join(w, "packages/b/package.json"), b, p)).toContain("scripts.prelint");
    const ok = JSON.stringify({ name: "b", scripts: { build: "tsc", dev: "vite" } });
    expect(await refusedContent(w, join(w, "packages/b/package.json"), ok, p)).toBeNull();
  });
});
