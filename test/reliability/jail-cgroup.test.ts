import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { pidAlive } from "../helpers/proc.ts";
import { supervisorOf } from "../helpers/supervisor.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * As root a jail's process limit is a pids cgroup of its own (RLIMIT_NPROC never counts
 * root's processes). It must be gone when the process that made it exits mid-job, not
 * left for the next jail start to sweep: through dist/dl, a sandboxed run_bash command
 * (its jail is dl serve's) with the server stopped by SIGTERM and by its stdin closing,
 * and a Gemini job (its jail is its supervisor's) whose server's stdin closes under
 * DELEGATE_JOBS_DIE_WITH_SERVER=1 and whose supervisor gets SIGTERM. Each time the cgroup
 * is looked for the moment the process is gone.
 */

const ROOT = process.platform === "linux" && process.getuid?.() === 0;
const KEY = "sk-jail-cgroup-key-0001";
const FAKE_AGY = new URL("../fixture/fake-agy.sh", import.meta.url).pathname;

/** Where dl makes jails' cgroups (cgroup v1's pids hierarchy, or v2's root with the pids controller). */
function pidsRoot(): string | null {
  if (existsSync("/sys/fs/cgroup/pids/cgroup.procs")) return "/sys/fs/cgroup/pids";
  try {
    return readFileSync("/sys/fs/cgroup/cgroup.subtree_control", "utf8").includes("pids") ? "/sys/fs/cgroup" : null;
  } catch {
    return null;
  }
}

/** The jail cgroups one of whose processes has `marker` in its command line. */
function cgroupsWith(marker: string): string[] {
  const root = pidsRoot()!;
  return readdirSync(root)
    .filter((n) => n.startsWith("dl-jail-"))
    .map((n) => join(root, n))
    .filter((dir) => {
      try {
        return readFileSync(join(dir, "cgroup.procs"), "utf8")
          .split("\n")
          .filter(Boolean)
          .some((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker));
      } catch {
        return false; // gone meanwhile
      }
    });
}

let fake: FakeModel;
let root: string;
const open: TaskDl[] = [];

function env(over: Record<string, string> = {}): Record<string, string> {
  const agents = join(root, "agents");
  return testEnv({
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agents,
    DELEGATE_LOCAL_MODEL: "cgroup-model",
    DELEGATE_RUN_BASH_SANDBOX: "1",
    DELEGATE_AGY_BIN: FAKE_AGY,
    DELEGATE_GEMINI_ALLOW_DANGER: "1",
    DELEGATE_GEMINI_STATE_DIR: join(root, "gemini-state"),
    ...over,
  });
}

beforeAll(async () => {
  fake = await startFakeModel({ apiKey: KEY });
  root = tempDir("jail-cgroup");
  mkdirSync(join(root, "agents"));
  writeFileSync(join(root, "agents/helper.md"), "---\nname: helper\ndescription: h\n---\nHelp.\n");
});
afterAll(async () => {
  await Promise.all(open.map((s) => s.close().catch(() => undefined)));
  await fake?.stop();
});

async function serve(over: Record<string, string> = {}): Promise<TaskDl> {
  requireBinary();
  const s = await connectTaskDl(env(over), { cwd: root });
  open.push(s);
  return s;
}

/** A sandboxed run_bash command that runs until stopped, in dl serve's own jail; its cgroup. */
async function bashInJail(s: TaskDl, marker: string): Promise<string> {
  fake.reset(); // a stopped server leaves its delegation's last reply unasked
  fake.script(reply.tool("run_bash", { command: `sleep ${marker}` }), reply.text("done"));
  const workdir = makeRepo(root, `bash-${marker}`, 0).repo;
  void s.client
    .callTool({ name: "delegate_to_local_agent", arguments: { agent_name: "helper", task: "t", workdir } })
    .catch(() => undefined);
  const [cg] = await until(
    () => {
      const found = cgroupsWith(`sleep ${marker}`);
      return found.length === 1 ? found : null;
    },
    "the command's jail cgroup",
    30_000,
  );
  return cg!;
}

/** A Gemini job that runs until stopped, in its supervisor's jail: the job's id, its cgroup. */
async function geminiInJail(s: TaskDl, marker: string): Promise<{ id: string; cg: string }> {
  const workdir = makeRepo(root, `gemini-${marker}`, 0).repo;
  const task = `SLEEP=${marker} say hi`;
  const sub = (await s.client.callTool({ name: "submit_gemini", arguments: { tasks: [{ task, workdir }] } })) as {
    structuredContent?: { jobs?: { id: string }[] };
  };
  const id = sub.structuredContent!.jobs![0]!.id;
  const [cg] = await until(
    () => {
      const found = cgroupsWith(task);
      return found.length === 1 ? found : null;
    },
    "the job's jail cgroup",
    30_000,
  );
  return { id, cg: cg! };
}

/** Waits until `pid` has exited; then the cgroup must already be gone. */
async function goneWith(pid: number, cg: string): Promise<void> {
  await until(() => !pidAlive(pid), `process ${pid} to exit`, 30_000);
  expect(existsSync(cg)).toBe(false);
}

let n = 0;
const marker = () => `${61 + (++n % 30)}.${process.pid % 1000}${n}`;

describe.skipIf(!ROOT || skipBwrap || pidsRoot() === null)(
  "a jail's pids cgroup is removed when its process stops mid-job",
  () => {
    test("dl serve stopped by SIGTERM mid-command: the sandboxed run_bash's cgroup", async () => {
      const s = await serve();
      const cg = await bashInJail(s, marker());
      s.io.proc.kill("SIGTERM");
      await goneWith(s.io.proc.pid, cg);
    }, 60_000);

    test("dl serve whose stdin closes mid-command: the sandboxed run_bash's cgroup", async () => {
      const s = await serve();
      const cg = await bashInJail(s, marker());
      s.io.proc.stdin.end();
      await goneWith(s.io.proc.pid, cg);
    }, 60_000);

    test("a Gemini job's supervisor, its server's stdin closed (DELEGATE_JOBS_DIE_WITH_SERVER=1)", async () => {
      const s = await serve({ DELEGATE_JOBS_DIE_WITH_SERVER: "1" });
      const { id, cg } = await geminiInJail(s, marker());
      const supervisor = supervisorOf(join(root, "gemini-state"), id);
      s.io.proc.stdin.end();
      await goneWith(supervisor, cg);
    }, 60_000);

    test("a Gemini job's supervisor stopped by SIGTERM", async () => {
      const s = await serve();
      const { id, cg } = await geminiInJail(s, marker());
      const supervisor = supervisorOf(join(root, "gemini-state"), id);
      process.kill(supervisor, "SIGTERM");
      await goneWith(supervisor, cg);
    }, 60_000);
  },
);
