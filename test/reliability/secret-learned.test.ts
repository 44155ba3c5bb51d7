import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";

/**
 * Values dl learns at run time (a credential a `.env` names, read by the agent) are cut
 * from every channel from the first time they are written, not only from the final result:
 * the progress lines, the transcript and `dl logs`, which a later process reads without
 * having learned anything. And a named value is cut whole, to where its format ends it.
 */

let fake: FakeModel;
let s: DlSession;
let root: string;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeModel();
  root = tempDir("secret-learned");
  const agentsDir = join(root, "agents");
  mkdirSync(join(root, "home"));
  await Bun.write(join(agentsDir, "helper.md"), "---\nname: helper\ntools: Read, Bash\n---\nHelp.\n");
  env = {
    HOME: join(root, "home"),
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_LOCAL_MODEL: "m",
    DELEGATE_CACHE_DIR: join(root, "cache"),
  };
  s = await connectDl(env);
});
afterAll(async () => {
  await s?.close();
  await fake?.stop();
});

/** Every file under `dir` whose bytes hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .map((n) => join(dir, n))
    .filter((p) => statSync(p).isFile() && readFileSync(p).toString("latin1").includes(needle));
}

async function delegate(workdir: string): Promise<{ result: string; progress: string[]; logsId: string }> {
  const progress: string[] = [];
  const res = await s.client.callTool(
    { name: "delegate_to_local_agent", arguments: { agent_name: "helper", task: "look", workdir } },
    { timeout: 60_000, onprogress: (p) => progress.push(String(p.message)) },
  );
  const logs = String((res.structuredContent as { logs?: string } | undefined)?.logs ?? "");
  return { result: JSON.stringify(res), progress, logsId: logs.split(" ").pop() ?? "" };
}

describe("values learned at run time", () => {
  test("a .env password the agent reads is cut from progress, the transcript and dl logs, not only the result", async () => {
    const workdir = tempDir("learned-work");
    const pw = "Pw7-learned-dotenv-value-42";
    writeFileSync(join(workdir, ".env"), `DB_PASSWORD=${pw}\n`);
    fake.script(
      reply.tool("read_file", { path: ".env" }),
      reply.tool("run_bash", { command: `echo ${pw}` }),
      reply.text(`the password is ${pw}`),
    );
    const { result, progress, logsId } = await delegate(workdir);
    expect(progress.some((p) => p.includes("run_bash"))).toBe(true);
    expect(logsId).toStartWith("dg-");
    const logs = await runDl(["logs", logsId], env);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain("run_bash");
    expect({
      result: result.includes(pw),
      progress: progress.filter((p) => p.includes(pw)),
      logs: logs.stdout.includes(pw),
      files: [...filesHolding(join(root, "home"), pw), ...filesHolding(join(root, "cache"), pw)],
    }).toEqual({ result: false, progress: [], logs: false, files: [] });
  }, 60_000);

  test("a flood of named values read after a password does not make dl forget it; one with $ and * is learned too", async () => {
    const workdir = tempDir("flood-work");
    const pw = "Pw7learnedEvictMe99y";
    const dollar = "Hx9$kq2*Lm7vQ";
    writeFileSync(join(workdir, ".env"), `DB_PASSWORD=${pw}\nPGPASSWORD=${dollar}\n`);
    const flood = Array.from({ length: 300 }, (_, i) => `T${i}_TOKEN=flood${i}vAlue${i}z`).join("\n");
    writeFileSync(join(workdir, "notes.txt"), `${flood}\n`);
    fake.script(
      reply.tool("read_file", { path: ".env" }),
      reply.tool("read_file", { path: "notes.txt" }),
      reply.tool("run_bash", { command: `echo ${pw}` }),
      reply.text(`the passwords are ${pw} and ${dollar}`),
    );
    const { result, progress, logsId } = await delegate(workdir);
    const logs = await runDl(["logs", logsId], env);
    expect(logs.stdout).toContain("run_bash");
    expect({
      result: [pw, dollar].filter((v) => result.includes(v)),
      progress: progress.filter((p) => p.includes(pw)),
      logs: logs.stdout.includes(pw),
      files: [...filesHolding(join(root, "home"), pw), ...filesHolding(join(root, "home"), dollar)],
    }).toEqual({ result: [], progress: [], logs: false, files: [] });
  }, 60_000);

  test("a progress line is redacted before it is cut: a key a made-up tool name ends with is never left most of its length", async () => {
    const token = `hf_${"AbCdEfGhIjKlMnOpQrStUvWxYz01234567"}`;
    fake.script(reply.tool(`${"z".repeat(257)} ${token}`, {}), reply.text("ok"));
    const { progress } = await delegate(tempDir("cut-work"));
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.filter((p) => p.includes(token.slice(0, 12)))).toEqual([]);
  }, 60_000);

  test("a named value is cut whole: base64 that starts with a slash, a password with & and !", async () => {
    const workdir = tempDir("named-work");
    const aws = "/wJalrXUtnFEMI/K7MDENG+bPxRfiCYzz7ExAmPlE";
    const pg = "Tr0ub4dor&3xyz!Qq";
    writeFileSync(join(workdir, ".env"), `AWS_SECRET_ACCESS_KEY=${aws}\nPGPASSWORD=${pg}\n`);
    fake.script(
      reply.tool("run_bash", { command: "cat .env" }),
      reply.text(`Found:\nAWS_SECRET_ACCESS_KEY=${aws}\nPGPASSWORD=${pg}\nbare: ${aws} ${pg}`),
    );
    const { result } = await delegate(workdir);
    expect(result).toContain("Found:");
    expect({ aws: result.includes("K7MDENG"), pg: result.includes("3xyz") }).toEqual({ aws: false, pg: false });
  }, 60_000);
});
