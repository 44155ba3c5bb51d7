import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { argsOf } from "../../src/cli/command.ts";
import { EXIT, EXIT_AFTER_SIGNAL } from "../../src/cli/exit.ts";
import { COMMANDS } from "../../src/cli/main.ts";
import { READ_BESIDE_SETTINGS, SETTINGS } from "../../src/config.ts";
import { leavesOf } from "../../src/config-tree.ts";
import { WAIT_EXIT } from "../../src/jobs/shell/wait.ts";
import { type CodeFacts, docProblems, flagsOf } from "./doc-claims.ts";

/**
 * The README and docs/ name only what dl has: a variable, a command, a flag of that
 * command or an exit code that the code does not have fails here (the CHANGELOG, a
 * record of what was, is not read). The checker itself is shown to catch each kind.
 */
const ROOT = resolve(import.meta.dir, "..", "..");
const pages = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter(
  (f) => f.endsWith(".md") && !f.endsWith("CHANGELOG.md"),
);

async function facts(): Promise<CodeFacts> {
  const beside = READ_BESIDE_SETTINGS.map((v) => v.env);
  const variables = new Set([...leavesOf(SETTINGS).map((l) => l.env), ...beside.filter((v) => !v.includes("<"))]);
  const families = beside.filter((v) => v.includes("<")).map((v) => v.slice(0, v.indexOf("<")));
  const commands = new Map<string, Set<string>>();
  for (const [name, load] of Object.entries(COMMANDS)) commands.set(name, flagsOf(argsOf(await load())));
  const exitCodes = new Set<number>([
    ...Object.values(EXIT),
    ...Object.values(WAIT_EXIT),
    ...Object.values(EXIT_AFTER_SIGNAL),
  ]);
  return { variables, families, commands, exitCodes };
}

describe("what the docs name exists", () => {
  test("the checker catches a variable, a command, a flag and an exit code dl does not have", async () => {
    const f = await facts();
    const page = [
      "Set `DELEGATE_NO_SUCH_THING=1`, then:",
      "```sh",
      "dl frobnicate",
      "dl jobs --colour red",
      "```",
      "`dl wait` may exit 9.",
      "`dl status --json` and `DELEGATE_CONCURRENCY_<BUCKET>`, `DELEGATE_RUN_PROVIDER_*`, `dl wait --all --timeout 5` (exit 3) are fine.",
    ].join("\n");
    expect(docProblems(page, f).sort()).toEqual(
      ["command dl frobnicate", "exit code 9", "flag dl jobs --colour", "variable DELEGATE_NO_SUCH_THING"].sort(),
    );
  });

  test("the README names the two commands of a source checkout, and package.json has them", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const block = /### From a source checkout[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const commands = block
      .split("\n")
      .map((l) => l.replace(/#.*/, "").trim())
      .filter(Boolean);
    expect(commands).toEqual(["npm ci && npm run setup", "npm test"]);
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts;
    // setup builds and runs dl's own checks; test builds and runs the suite.
    for (const part of ["bun build.ts", "npm run typecheck", "npm run lint", "./dist/dl status"])
      expect(scripts.setup).toContain(part);
    expect(scripts.test).toContain("bun test");
  });

  for (const page of pages) {
    test(`${page} names only variables, commands, flags and exit codes dl has`, async () => {
      const problems = docProblems(readFileSync(join(ROOT, page), "utf8"), await facts());
      expect(problems).toEqual([]);
    });
  }
});
