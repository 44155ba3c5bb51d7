import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectDl, type DlSession, tempDir } from "../helpers/dl.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * A delegation whose workdir is a checkout `claude --worktree feature` made
 * (`<project>/.claude/worktrees/feature`), through the compiled `dl serve` with the real
 * jail: the agent edits and runs commands there as in any work tree, and the checkout's
 * own configuration (its `.claude`, `.vscode`) stays out of its reach.
 */

let fake: FakeModel;
let session: DlSession;
let repo: string;

function git(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

beforeAll(async () => {
  fake = await startFakeModel();
  const agentsDir = tempDir("agents");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: h\n---\nHelp.\n");
  repo = tempDir("claude-wt-repo");
  writeFileSync(join(repo, "a.txt"), "a\n");
  git(repo, "init", "-q");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "one");
  git(repo, "worktree", "add", "-q", ".claude/worktrees/feature");
  mkdirSync(join(repo, ".claude/worktrees/scratch"));
  session = await connectDl({
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_LOCAL_MODEL: "local-test-model",
    DELEGATE_RUN_BASH_SANDBOX: "1",
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

const delegate = (workdir: string) =>
  session.client.callTool({ name: "delegate_to_local_agent", arguments: { agent_name: "helper", task: "t", workdir } });

describe.skipIf(skipBwrap)("a workdir in Claude Code's .claude/worktrees", () => {
  test("the checkout is a work tree: the agent writes and runs jailed commands there; its own .claude and .vscode stay protected", async () => {
    const wt = join(repo, ".claude/worktrees/feature");
    fake.reset();
    fake.script(
      reply.tool("write_file", { path: "src/new.txt", content: "written\n" }),
      reply.tool("run_bash", { command: "echo made > made.txt && git status --porcelain" }),
      reply.tool("write_file", { path: ".claude/settings.json", content: "{}" }),
      reply.tool("run_bash", { command: "mkdir -p .vscode && echo '{}' > .vscode/tasks.json" }),
      reply.text("done"),
    );
    const res = await delegate(wt);
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    expect(readFileSync(join(wt, "src/new.txt"), "utf8")).toBe("written\n");
    expect(readFileSync(join(wt, "made.txt"), "utf8")).toBe("made\n");
    expect(JSON.stringify(fake.requests[2]?.body)).toContain("?? made.txt");
    expect(JSON.stringify(fake.requests[3]?.body)).toContain("path_refused");
    expect(existsSync(join(wt, ".claude/settings.json"))).toBe(false);
    expect(existsSync(join(wt, ".vscode/tasks.json"))).toBe(false);
    expect(git(repo, "worktree", "list")).toContain(wt);
  });

  test("a folder there that is no checkout is still refused as Claude Code's configuration", async () => {
    const res = await delegate(join(repo, ".claude/worktrees/scratch"));
    expect(res.isError).toBe(true);
    expect(JSON.stringify(res.content)).toContain("Claude Code's project configuration");
    expect((res.structuredContent as { failure_kind?: string } | undefined)?.failure_kind).toBe("workdir_forbidden");
  });
});
