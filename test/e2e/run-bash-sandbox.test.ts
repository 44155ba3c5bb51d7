import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectDl, type DlSession, tempDir } from "../helpers/dl.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * DELEGATE_RUN_BASH_SANDBOX through the product: the compiled `dl serve`, a scripted fake
 * model that makes the agent run one command, and the real bwrap jail around it.
 */

const KEY = "sk-bash-sandbox-key";
const HOME = process.env.HOME!;
let fake: FakeModel;
let agentsDir: string;
let outside: string;
const sessions: DlSession[] = [];

/** Reads the planted key and the neighbour's file, writes in the workdir and outside it. */
function probeCommand(): string {
  return [
    `cat ${HOME}/.ssh/id_rsa`,
    `cat ${outside}/neighbour.txt`,
    `echo jailed > ${outside}/planted.txt`,
    "echo made > inside.txt",
    "echo END",
  ].join("; ");
}

async function runOnce(sandbox: string | undefined): Promise<{ toolResult: string; workdir: string }> {
  const s = await connectDl({
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_LOCAL_MODEL: "local-test-model",
    DELEGATE_RUN_BASH_SANDBOX: sandbox,
  });
  sessions.push(s);
  fake.reset();
  fake.script(reply.tool("run_bash", { command: probeCommand() }), reply.text("done"));
  const workdir = tempDir("bash-jail-proj");
  const res = await s.client.callTool({
    name: "delegate_to_local_agent",
    arguments: { agent_name: "helper", task: "run it", workdir },
  });
  expect(res.isError).toBeFalsy();
  return { toolResult: JSON.stringify(fake.requests[1]?.body), workdir };
}

beforeAll(async () => {
  fake = await startFakeModel({ apiKey: KEY });
  agentsDir = tempDir("agents");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: h\n---\nHelp.\n");
  mkdirSync(join(HOME, ".ssh"), { recursive: true });
  writeFileSync(join(HOME, ".ssh/id_rsa"), "BASH-SANDBOX-SSH-KEY", { mode: 0o600 });
  outside = tempDir("bash-outside");
  writeFileSync(join(outside, "neighbour.txt"), "NEIGHBOUR-FILE");
});
afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  await fake?.stop();
});

describe.skipIf(skipBwrap)("run_bash with DELEGATE_RUN_BASH_SANDBOX", () => {
  test("off (default): the command sees HOME and the neighbour, as before", async () => {
    const { toolResult, workdir } = await runOnce(undefined);
    expect(toolResult).toContain("BASH-SANDBOX-SSH-KEY");
    expect(toolResult).toContain("NEIGHBOUR-FILE");
    expect(readFileSync(join(workdir, "inside.txt"), "utf8")).toBe("made\n");
    expect(existsSync(join(outside, "planted.txt"))).toBe(true);
  });

  test("on: the workdir is writable, HOME and everything else outside it are absent", async () => {
    const planted = join(outside, "planted.txt");
    if (existsSync(planted)) Bun.spawnSync(["rm", "-f", planted]);
    const { toolResult, workdir } = await runOnce("1");
    expect(toolResult).toContain("END");
    expect(toolResult).not.toContain("BASH-SANDBOX-SSH-KEY");
    expect(toolResult).not.toContain("NEIGHBOUR-FILE");
    expect(toolResult).toContain("No such file or directory");
    expect(readFileSync(join(workdir, "inside.txt"), "utf8")).toBe("made\n");
    expect(existsSync(planted)).toBe(false);
  });
});
