import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * As root, a child dl does not jail must not read dl's keys (or its parent's, or any
 * other process's environment) from /proc: root is never stopped by dl's non-dumpable
 * flag. Through dist/dl serve, started by a parent that holds a secret of its own: an
 * agent's run_bash command (no sandbox) and a Codex CLI (test/fixture/proc-snoop.sh as
 * DELEGATE_CODEX_BIN) read /proc/<dl>/environ, /proc/<dl's parent>/environ and every
 * environ they can see, unmount /proc to look beneath it and mount a procfs anew. They
 * find only their own namespace's processes and nothing of either secret.
 */

const ROOT = process.getuid?.() === 0 && process.platform === "linux";
const SNOOP = new URL("../fixture/proc-snoop.sh", import.meta.url).pathname;
const KEY = `sk-root-proc-${process.pid}-dl-key`;
const PARENT_SECRET = `parent-secret-${process.pid}-of-the-host`;
const HOST_NS = readlinkSync("/proc/self/ns/pid");

let fake: FakeModel;
let root: string;
let client: Client;
let parentPid = 0;
let dlPid = 0;

/** dl serve's pid: the one child of its parent shell. */
function childOf(pid: number): number {
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const kids = readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim();
    if (kids) return Number(kids.split(/\s+/)[0]);
  }
  return 0;
}

beforeAll(async () => {
  if (!ROOT) return;
  fake = await startFakeModel({ apiKey: KEY });
  root = tempDir("root-proc");
  const agents = join(root, "agents");
  Bun.spawnSync(["mkdir", "-p", agents]);
  writeFileSync(join(agents, "helper.md"), "---\nname: helper\ndescription: helper\n---\nYou help.\n");
  // A parent that stays (the command after `serve` keeps sh alive) with a secret of its own.
  const transport = new StdioClientTransport({
    command: "sh",
    args: ["-c", '"$0" serve; exit $?', requireBinary()],
    env: testEnv({
      PARENT_SECRET,
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_KEY: KEY,
      DELEGATE_LOCAL_AGENTS_DIR: agents,
      DELEGATE_LOCAL_MODEL: "root-proc",
      DELEGATE_CODEX_BIN: SNOOP,
      DELEGATE_CODEX_STAGGER_S: "0",
    }),
    stderr: "pipe",
  });
  client = new Client({ name: "root-proc", version: "1.0.0" });
  await client.connect(transport);
  parentPid = transport.pid ?? 0;
  dlPid = childOf(parentPid);
});
afterAll(async () => {
  await client?.close();
  await fake?.stop();
});

/** What the snoop wrote: it ran in its own namespace and found neither secret. */
function expectNothingFound(out: string): void {
  const found = readFileSync(out, "utf8");
  expect(found).toContain(`host ${HOST_NS}`);
  expect(found).not.toStartWith(`ns ${HOST_NS} `); // its own pid namespace
  expect(found).toContain("PATH="); // the control: it reads environments it can see (its own)
  expect(found).not.toContain(KEY);
  expect(found).not.toContain(PARENT_SECRET);
  const visible = Number(/== pids visible: (\d+)/.exec(found)?.[1]);
  expect(visible).toBeLessThan(10); // its own few, never the host's
  expect(found).toMatch(/umounted \/proc: 0 entries beneath/);
  expect(Number(/new procfs: (\d+) pids/.exec(found)?.[1] ?? "0")).toBeLessThan(10);
}

describe.skipIf(!ROOT)("as root, the children dl does not jail cannot read dl's keys from /proc", () => {
  test("an agent's run_bash command (no sandbox)", async () => {
    expect(dlPid).toBeGreaterThan(1);
    // Without the pid namespace, these are readable by any root process: the premise.
    expect(readFileSync(`/proc/${dlPid}/environ`, "utf8")).toContain(KEY);
    expect(readFileSync(`/proc/${parentPid}/environ`, "utf8")).toContain(PARENT_SECRET);
    const dir = makeRepo(root, "bash", 0).repo;
    const out = join(dir, "found.txt");
    const command = `sh ${SNOOP} ${out} '${HOST_NS}' ${dlPid} ${parentPid} ${process.pid}`;
    fake.script("root-proc", reply.tool("run_bash", { command }), reply.text("done"));
    const r = await client.callTool({
      name: "delegate_to_local_agent",
      arguments: { agent_name: "helper", task: "look around", workdir: dir },
    });
    expect(r.isError).toBeFalsy();
    expectNothingFound(out);
  });

  test("the Codex CLI", async () => {
    const dir = makeRepo(root, "codex", 0).repo;
    const out = join(dir, "found.txt");
    const task = `snoop ${out} ${HOST_NS} ${dlPid} ${parentPid} ${process.pid}`;
    await client.callTool({ name: "delegate_to_codex", arguments: { task, workdir: dir } });
    expectNothingFound(out);
  });
});
