import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lstatSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { codexServeEnv } from "../helpers/codex-home.ts";
import { callTool, type DlSession, pollUntilEnded, requireBinary, sessionPool, tempDir } from "../helpers/dl.ts";
import { makeFifo } from "../helpers/fifo.ts";
import { pingWhile } from "../helpers/pinging.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * Hostile result files through dist/dl serve, for each provider that leaves dl a file:
 * the dsh launcher's result.json, Codex's last-message.txt (the real CLI; the file is
 * planted in the job dir while Codex waits on the model, as any process of the user
 * could), and an agent job's progress.json while the job runs. Before the bounded reader a FIFO froze the
 * server in open(), a link to /dev/zero grew it by gigabytes, a link to any file echoed
 * that file. Now each such job fails `result_file_refused` (or shows no progress), the
 * server answers every ping within a second, and its RSS stays under 150 MB.
 */
const SECRET = "HOSTILE-FILE-SECRET-4X9";
const RSS_LIMIT = 150 * 1024 * 1024;
const isRoot = process.getuid?.() === 0;

let root: string;
let secretFile: string;
const sessions = sessionPool();

beforeAll(() => {
  requireBinary();
  root = tempDir("hostile-files");
  secretFile = join(root, "secret.txt");
  writeFileSync(secretFile, `${SECRET}\n`);
});
afterAll(async () => {
  await sessions.closeAll();
});

const serve = (env: Record<string, string>) => sessions.serve(env);

function rssOf(s: DlSession): number {
  const status = readFileSync(`/proc/${s.transport.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Pings `s` until `p` settles: the slowest ping and the largest RSS seen meanwhile. */
async function watchWhile<T>(s: DlSession, p: Promise<T>): Promise<{ value: T; slowestPing: number; peakRss: number }> {
  const w = await pingWhile(s.client, p, () => rssOf(s));
  return { value: w.value, slowestPing: w.slowestPing, peakRss: w.peakSample };
}

type Job = { id: string; status: string; failure_kind: string | null; final_response: string | null };

function expectHeld(w: { slowestPing: number; peakRss: number }): void {
  console.log(`  slowest ping ${w.slowestPing.toFixed(0)} ms, peak server RSS ${(w.peakRss / 2 ** 20).toFixed(0)} MiB`);
  expect(w.slowestPing).toBeLessThan(1_000);
  expect(w.peakRss).toBeLessThan(RSS_LIMIT);
}

describe("dsh: a hostile result.json", () => {
  let s: DlSession;
  let repo: string;
  beforeAll(async () => {
    const models = join(root, "dsh-models.json");
    writeFileSync(models, JSON.stringify({ models: { "ds-flash": { model: "deepseek-v4-flash", enabled: true } } }));
    s = await serve({
      DELEGATE_DSH_LAUNCHER: join(import.meta.dir, "..", "fixture", "fake-dsh.sh"),
      DELEGATE_DSH_STATE_DIR: join(root, "dsh-state"),
      DELEGATE_DSH_MODELS_FILE: models,
      DELEGATE_DSH_STAGGER_S: "0",
    });
    repo = makeRepo(root, "dsh-repo").repo;
  });

  const MODES: [string, RegExp][] = [
    ["fifo", /result\.json refused: it is a FIFO/],
    ["zero-link", /result\.json refused: it is a symbolic link/],
    ["link", /result\.json refused: it is a symbolic link/],
    ["huge", /result\.json refused: it is larger than \d+ bytes/],
    ...(isRoot ? ([["zero-node", /result\.json refused: it is a device/]] as [string, RegExp][]) : []),
  ];
  for (const [mode, why] of MODES) {
    test(`${mode}: the job fails result_file_refused, the server keeps answering`, async () => {
      const task = `MODE: ${mode}\nMS: 10\nLINK: ${secretFile}\nDo the task.`;
      const sub = await callTool<{ jobs: { id: string }[] }>(s, "submit_dsh", {
        tasks: [{ task, model: "ds-flash", workdir: repo }],
      });
      const id = sub.data.jobs[0]!.id;
      const w = await watchWhile(s, pollUntilEnded<Job>(s, "poll_dsh", id));
      expect(w.value).toMatchObject({ status: "failed", failure_kind: "result_file_refused" });
      expect(w.value.final_response).toMatch(why);
      expect(w.value.final_response).not.toContain(SECRET);
      expectHeld(w);
    }, 90_000);
  }
});

describe("codex: a hostile last-message.txt put in place while Codex works", () => {
  let fake: FakeResponses;
  let s: DlSession;
  let stateDir: string;
  let repo: string;
  /** What to leave where Codex will write its last message, for the job running now. */
  let plant: ((file: string) => void) | null = null;

  beforeAll(async () => {
    stateDir = join(root, "codex-state");
    // Codex is waiting on this answer, so its job dir exists and the -o file does not yet.
    fake = startFakeResponses(() => {
      const jobs = join(stateDir, "jobs");
      for (const id of readdirSync(jobs)) {
        const file = join(jobs, id, "last-message.txt");
        // Codex creates the file (empty) at start and fills it at the end.
        const st = lstatOrNull(file);
        if (st?.isFile() && st.size === 0 && plant) {
          rmSync(file);
          plant(file);
        }
      }
      return { kind: "ok", text: "all done" };
    });
    // No stagger: the four jobs run one after another, and the 2.5 s a job would wait after the last launch is no part of what is tested.
    s = await serve({ ...codexServeEnv(join(root, "codex"), fake.baseUrl, stateDir), DELEGATE_CODEX_STAGGER_S: "0" });
    repo = makeRepo(root, "codex-repo").repo;
  });
  afterAll(async () => {
    await fake?.stop();
  });

  // Codex opens the -o file when it starts and writes its answer through that open file
  // at the end; a file put in its place meanwhile is what dl finds. Before the bounded
  // reader: a FIFO froze the server, a link to /dev/zero grew it without end, a link to
  // another file made that file the job's answer.
  const CASES: [string, (file: string) => void, RegExp][] = [
    [
      "a symlink to another file",
      (f) => symlinkSync(secretFile, f),
      /last-message\.txt refused: it is a symbolic link/,
    ],
    ["a symlink to /dev/zero", (f) => symlinkSync("/dev/zero", f), /last-message\.txt refused: it is a symbolic link/],
    ["a FIFO", makeFifo, /last-message\.txt refused: it is a FIFO/],
  ];
  for (const [name, how, why] of CASES) {
    test(`${name}: the job fails result_file_refused, nothing leaks, the server keeps answering`, async () => {
      let planted = false;
      plant = (f) => {
        how(f);
        planted = true;
      };
      const sub = await callTool<{ jobs: { id: string }[] }>(s, "submit_codex", {
        tasks: [{ task: "go", workdir: repo, timeout_s: 30 }],
      });
      const id = sub.data.jobs[0]!.id;
      const w = await watchWhile(s, pollUntilEnded<Job>(s, "poll_codex", id));
      plant = null;
      expect(planted).toBe(true);
      expect(w.value).toMatchObject({ status: "failed", failure_kind: "result_file_refused" });
      expect(w.value.final_response).toMatch(why);
      expect(w.value.final_response).not.toContain(SECRET);
      expect(readFileSync(secretFile, "utf8")).toBe(`${SECRET}\n`);
      expectHeld(w);
    }, 90_000);
  }

  test("with nothing planted the same server's next job is done with the model's answer", async () => {
    const sub = await callTool<{ jobs: { id: string }[] }>(s, "submit_codex", {
      tasks: [{ task: "go", workdir: repo }],
    });
    expect(await pollUntilEnded<Job>(s, "poll_codex", sub.data.jobs[0]!.id)).toMatchObject({
      status: "done",
      final_response: "all done",
    });
  }, 90_000);
});

describe("agent: a hostile progress.json while the job runs", () => {
  let fake: FakeModel;
  let s: DlSession;
  let stateDir: string;
  beforeAll(async () => {
    fake = await startFakeModel({ apiKey: "sk-hostile-files" });
    const agents = tempDir("hostile-agents");
    writeFileSync(join(agents, "helper.md"), "---\nname: helper\ndescription: helper\n---\nHelp.\n");
    stateDir = join(root, "agent-state");
    s = await serve({
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_KEY: "sk-hostile-files",
      DELEGATE_LOCAL_AGENTS_DIR: agents,
      DELEGATE_AGENT_STATE_DIR: stateDir,
    });
  });
  afterAll(async () => {
    await fake?.stop();
  });

  const PLANTS: [string, (file: string) => void][] = [
    ["a FIFO", makeFifo],
    ["a symlink to /dev/zero", (f) => symlinkSync("/dev/zero", f)],
  ];
  for (const [name, how] of PLANTS) {
    test(`${name}: poll_agent answers at once, without progress`, async () => {
      fake.reset();
      fake.always(reply.hang());
      const repo = makeRepo(root, `agent-${name.replace(/\W+/g, "-")}`).repo;
      const sub = await callTool<{ jobs: { id: string }[] }>(s, "submit_agent", {
        tasks: [{ agent_name: "helper", task: "t", workdir: repo, model: "local-test-model" }],
      });
      const id = sub.data.jobs[0]!.id;
      await until(async () => fake.inFlight() === 1, "the agent to reach the backend", 30_000);
      const file = join(stateDir, "jobs", id, "progress.json");
      rmSync(file, { force: true });
      how(file);
      const w = await watchWhile(
        s,
        callTool<{ jobs: (Job & { progress?: unknown })[] }>(s, "poll_agent", { ids: [id] }),
      );
      const [job] = w.value.data.jobs;
      expect(job).toMatchObject({ id, status: "running" });
      expect(job!.progress).toBeUndefined();
      expectHeld(w);
      const c = await callTool<{ status: string }>(s, "cancel_agent", { id });
      expect(c.data.status).toBe("cancelled");
    }, 90_000);
  }
});

function lstatOrNull(p: string): ReturnType<typeof lstatSync> | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}
