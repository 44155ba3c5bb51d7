import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { editFileTool } from "../../src/agent/tools/edit-file.ts";
import { readFileTool } from "../../src/agent/tools/read-file.ts";
import { WRITE_FILE_DEFAULTS, type WriteFileSettings } from "../../src/agent/tools/settings.ts";
import type { ToolContext } from "../../src/agent/tools/types.ts";
import { writeFileTool } from "../../src/agent/tools/write-file.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * The agent's own write tools, with no jail around them: a model steered by a file it
 * read writes `.git/config`, a submodule's config, a hook, husky's folder or Claude Code's
 * settings, and the host's next git status or session runs it. Each is refused with
 * path_refused naming the rule, through links and other letter cases; reading stays open.
 */

const ENV = {
  PATH: "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@x",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@x",
};
const settings: WriteFileSettings = { ...WRITE_FILE_DEFAULTS, protect: { writable: ["CLAUDE.md"], gitEnv: ENV } };
const write = writeFileTool(settings);
const edit = editFileTool(settings);
let c: ToolContext;

const git = (cwd: string, ...args: string[]) => runGroup({ argv: ["git", ...args], cwd, env: ENV });

beforeAll(async () => {
  const workdir = realpathSync(tempDir("write-refusals"));
  const lib = join(workdir, "..", "refusals-lib");
  mkdirSync(lib, { recursive: true });
  await git(lib, "init", "-q");
  await git(lib, "commit", "-q", "--allow-empty", "-m", "lib");
  await git(workdir, "init", "-q");
  await git(workdir, "commit", "-q", "--allow-empty", "-m", "first");
  await git(workdir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub");
  await git(workdir, "config", "core.hooksPath", "tools/hooks");
  symlinkSync(".git", join(workdir, "gitlink"));
  mkdirSync(join(workdir, "trap/objects"), { recursive: true });
  mkdirSync(join(workdir, "trap/refs"));
  writeFileSync(join(workdir, "trap/HEAD"), "ref: refs/heads/main\n");
  // Hook managers' keys: lint-staged's task and husky 4's hook run these at commit.
  mkdirSync(join(workdir, "scripts"));
  writeFileSync(join(workdir, "scripts/check.sh"), "true\n");
  writeFileSync(
    join(workdir, "package.json"),
    JSON.stringify({
      "lint-staged": { "*.ts": "eslint --fix" },
      husky: { hooks: { "pre-commit": "sh scripts/check.sh" } },
    }),
  );
  // The hook runs lint-staged by its path: lint-staged's package and what it requires run too.
  mkdirSync(join(workdir, "tools/hooks"), { recursive: true });
  writeFileSync(join(workdir, "tools/hooks/pre-commit"), "#!/bin/sh\nexec node_modules/.bin/lint-staged\n");
  mkdirSync(join(workdir, "node_modules/lint-staged/bin"), { recursive: true });
  mkdirSync(join(workdir, "node_modules/micromatch"), { recursive: true });
  mkdirSync(join(workdir, "node_modules/.bin"), { recursive: true });
  writeFileSync(join(workdir, "node_modules/lint-staged/bin/cli.js"), "import 'micromatch'\n");
  writeFileSync(
    join(workdir, "node_modules/lint-staged/package.json"),
    JSON.stringify({ name: "lint-staged", dependencies: { micromatch: "4", commander: "14" } }),
  );
  writeFileSync(join(workdir, "node_modules/micromatch/index.js"), "module.exports = {}\n");
  symlinkSync("../lint-staged/bin/cli.js", join(workdir, "node_modules/.bin/lint-staged"));
  c = { workdir, allowEscape: false, signal: new AbortController().signal };
});

describe("write_file and edit_file refuse what the host runs or obeys", () => {
  const cases: [string, string][] = [
    [".git/config", "git-metadata"],
    [".GIT/config", "git-metadata"],
    ["gitlink/hooks/pre-commit", "git-metadata"],
    [".git/modules/sub/config", "git-metadata"],
    ["sub/.git", "git-metadata"],
    [".gitmodules", "git-metadata"],
    ["trap/config", "git-metadata"],
    ["tools/hooks/pre-commit", "git-config"],
    [".husky/pre-commit", "hook-manager"],
    [".pre-commit-config.yaml", "hook-manager"],
    [".claude/settings.json", "claude-code"],
    [".claude/agents/coder.md", "claude-code"],
    [".mcp.json", "claude-code"],
    [".vscode/tasks.json", "editor-config"],
    ["web/.envrc", "shell-env"],
    ["node_modules/.bin/eslint", "config-named"],
    ["scripts/check.sh", "config-named"],
    ["node_modules/lint-staged/lib/run.js", "git-config"],
    ["node_modules/micromatch/index.js", "git-config"],
    ["node_modules/commander/index.js", "git-config"], // absent: nearer than any other commander node would find
    ["eslint.config.js", "tool-config"],
    ["src/ui/.prettierrc.cjs", "tool-config"],
  ];
  for (const [path, rule] of cases) {
    test(`${path}: path_refused, rule ${rule}`, async () => {
      const r = await write.run({ path, content: "[core]\n\tfsmonitor = ./evil.sh\n" }, c);
      expect(r.is_error).toBe(true);
      expect(r.failure_kind).toBe("path_refused");
      expect(r.content).toContain("path_refused");
      expect(r.content).toContain(`rule ${rule}`);
    });
  }

  test("edit_file too; read_file still reads it", async () => {
    const e = await edit.run({ path: ".git/config", old_string: "[core]", new_string: "[core]\n\tfsmonitor = ./x" }, c);
    expect(e.failure_kind).toBe("path_refused");
    expect(readFileSync(join(c.workdir, ".git/config"), "utf8")).not.toContain("fsmonitor");
    const r = await readFileTool().run({ path: ".git/config" }, c);
    expect(r.is_error).toBe(false);
    expect(r.content).toContain("[core]");
  });

  test("ordinary files and a path the user named writable are written", async () => {
    expect((await write.run({ path: "src/a.ts", content: "x\n" }, c)).is_error).toBe(false);
    expect((await write.run({ path: "CLAUDE.md", content: "notes\n" }, c)).is_error).toBe(false);
    expect(existsSync(join(c.workdir, "src/a.ts"))).toBe(true);
  });
});
