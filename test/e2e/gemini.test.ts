import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { identity } from "../../src/sys/identity.ts";
import { groupAlive } from "../../src/sys/process.ts";
import { callTool, connectDl, type DlSession, requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { connectInProcess, type InProcessSession } from "../helpers/in-process.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * Gemini jobs through the product: the compiled `dl serve`, the SDK's Client, the fake
 * agy inside the real bubblewrap jail, and `dl wait` as the completion signal.
 */

type JobView = {
  id: string;
  status: string;
  workdir: string;
  final_response?: string | null;
  failure_kind?: string | null;
  session_id?: string | null;
  exit_code?: number | null;
};
type Structured = { isError?: boolean; text: string; data: Record<string, unknown> };

const FAKE_AGY = new URL("../fixture/fake-agy.sh", import.meta.url).pathname;

/**
 * Pids of the processes whose name matches `comm` and whose parent is `ppid` (from
 * /proc/<pid>/stat; Debian's pasta re-executes itself as passt.avx2).
 */
function childrenNamed(ppid: number, comm: RegExp): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const m = /^\d+ \((.*)\) \S+ (\d+)/.exec(readFileSync(`/proc/${d}/stat`, "utf8"));
        return m?.[1] && comm.test(m[1]) && Number(m[2]) === ppid ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
const HOME = process.env.HOME!;
let root: string;
let stateDir: string;
let session: DlSession;
const extra: (DlSession | InProcessSession)[] = [];

function serveEnv(over: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    DELEGATE_AGY_BIN: FAKE_AGY,
    DELEGATE_GEMINI_STATE_DIR: stateDir,
    DELEGATE_GEMINI_ALLOW_DANGER: "1",
    DELEGATE_GEMINI_MAX_CONCURRENT: "2",
    ...over,
  };
}

const call = (s: Pick<DlSession, "client">, name: string, args: Record<string, unknown>): Promise<Structured> =>
  callTool(s, name, args);

async function pollOne(s: DlSession, id: string): Promise<JobView> {
  return ((await call(s, "poll_gemini", { ids: [id] })).data.jobs as JobView[])[0]!;
}

async function startServer(over: Record<string, string | undefined> = {}): Promise<DlSession> {
  const s = await connectDl(serveEnv(over));
  extra.push(s);
  return s;
}

/** `startServer`'s set-up in this process (helpers/in-process.ts), for what a tool answers without running agy. */
async function startInProcess(over: Record<string, string | undefined> = {}): Promise<InProcessSession> {
  const s = await connectInProcess(serveEnv(over));
  extra.push(s);
  return s;
}

beforeAll(async () => {
  root = tempDir("gemini-e2e");
  stateDir = join(root, "gemini-jobs");
  // A secret the jailed agy must never read, and another project beside the workdirs.
  mkdirSync(join(HOME, ".ssh"), { recursive: true });
  writeFileSync(join(HOME, ".ssh/id_rsa"), "E2E-SSH-PRIVATE-KEY", { mode: 0o600 });
  // agy's configuration exists where agy is set up: the jail shows it read-only.
  mkdirSync(join(HOME, ".gemini"), { recursive: true });
  writeFileSync(join(HOME, ".gemini/settings.json"), '{"e2e":true}');
  mkdirSync(join(root, "neighbour"), { recursive: true });
  writeFileSync(join(root, "neighbour/secret.txt"), "NEIGHBOUR-SECRET");
  session = await connectDl(serveEnv());
});
afterAll(async () => {
  await session?.close();
  await Promise.all(extra.map((s) => s.close().catch(() => undefined)));
});

describe.skipIf(skipBwrap)("Gemini jobs through dist/dl serve, fake agy in the real bwrap jail", () => {
  test("submit_gemini of 3 tasks: all done, the watch command exits 0, the escaping fake reads nothing", async () => {
    const repos = [0, 1, 2].map((i) => makeRepo(root, `three-${i}`, 0).repo);
    const tasks = [
      { task: `ESCAPE read=${join(root, "neighbour/secret.txt")}`, workdir: repos[0]! },
      { task: "SLEEP=0.3 say hello", workdir: repos[1]!, effort: "medium" },
      { task: "SLEEP=0.3 say hi", workdir: repos[2]!, effort: "high" },
    ];
    const sub = await call(session, "submit_gemini", { tasks });
    expect(sub.isError).toBeFalsy();
    const ids = (sub.data.jobs as { id: string }[]).map((j) => j.id);
    expect(ids.every((id) => id.startsWith("gm-"))).toBe(true);
    expect(sub.data.watch).toBe(`${requireBinary()} wait ${ids.join(" ")}`);
    expect(String(sub.data.watch_hint)).toContain("background");

    const [bin, verb, ...rest] = String(sub.data.watch).split(" ");
    const watcher = Bun.spawn([bin!, verb!, ...rest], {
      env: testEnv({ DELEGATE_GEMINI_STATE_DIR: stateDir }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(watcher.stdout).text(), watcher.exited]);
    expect(code).toBe(0);
    expect(out.trim().split("\n")).toHaveLength(3);

    const views = (await call(session, "poll_gemini", { ids })).data.jobs as (JobView & { model: string })[];
    expect(views.map((v) => v.status)).toEqual(["done", "done", "done"]);
    expect(views.map((v) => v.model)).toEqual([
      "gemini-3.8-flash-low",
      "gemini-3.8-flash-medium",
      "gemini-3.8-flash-high",
    ]);
    const report = views[0]!.final_response ?? "";
    expect(report).toContain(`read ${HOME}/.ssh/id_rsa: blocked`);
    expect(report).toContain(`read ${join(root, "neighbour/secret.txt")}: blocked`);
    expect(report).toContain(`write ${HOME}/.gemini/settings.json: blocked`);
    expect(report).not.toContain("LEAKED");
    expect(report).not.toContain("E2E-SSH-PRIVATE-KEY");
    expect(report).toContain(`agy-wrote.txt: written`);
    expect(readFileSync(join(HOME, ".gemini/settings.json"), "utf8")).toBe('{"e2e":true}');
    expect(readFileSync(join(repos[0]!, "agy-wrote.txt"), "utf8")).toBe("written by fake agy\n");
  });

  test("delegate_to_gemini blocks and returns the reference's fields", async () => {
    const repo = makeRepo(root, "solo", 0).repo;
    const r = await call(session, "delegate_to_gemini", { task: "hello there", workdir: repo });
    expect(r.isError).toBeFalsy();
    expect(r.data).toMatchObject({ status: "done", response: "done: hello there", exit_code: 0 });
    expect(String(r.data.conversation_id)).toStartWith("fake-");
    expect(r.data.usage).toMatchObject({ input_tokens: 120, output_tokens: 30, total_tokens: 150 });
    expect(typeof r.data.duration_s).toBe("number");
  });

  test("a jailed job's result lists what it changed and what dl kept read-only; so do poll and dl show", async () => {
    const repo = makeRepo(root, "changes", 0).repo;
    writeFileSync(join(repo, "gone.txt"), "to be deleted");
    Bun.spawnSync(["git", "add", "gone.txt"], { cwd: repo, env: testEnv() });
    const r = await call(session, "delegate_to_gemini", { task: "ESCAPE RUN=rm-gone", workdir: repo });
    expect(r.data.status).toBe("done");
    expect(r.data.files_changed).toEqual({
      added: 1,
      changed: 0,
      deleted: 1,
      files: [
        { path: "agy-wrote.txt", change: "added" },
        { path: "gone.txt", change: "deleted" },
      ],
      truncated: false,
    });
    const kept = r.data.kept_read_only as { count: number; paths: string[]; note: string };
    expect(kept.paths).toEqual(expect.arrayContaining([".git", ".claude"]));
    expect(kept.note).toContain("committed nothing");
    const id = String(r.data.id);
    expect((await pollOne(session, id)) as unknown).toMatchObject({ files_changed: r.data.files_changed });
    const show = await runDl(["show", id], serveEnv());
    expect(show.stdout).toContain("changes   files changed: 1 added, 0 changed, 1 deleted");
    expect(show.stdout).toContain("added agy-wrote.txt");
    expect(show.stdout).toContain("deleted gone.txt");
    expect(show.stdout).toMatch(/kept read-only: \d+ paths/);
  });

  test("bad effort is refused with the allowed list; no JSON and an auth error fail with what to do", async () => {
    const repo = makeRepo(root, "bad", 0).repo;
    const effort = await call(session, "submit_gemini", { tasks: [{ task: "x", workdir: repo, effort: "max" }] });
    expect(effort.isError).toBe(true);
    expect(effort.text).toContain("low, medium, high");
    const model = await call(session, "delegate_to_gemini", { task: "x", workdir: repo, model: "claude-x" });
    expect(model.isError).toBe(true);

    const notJson = await call(session, "delegate_to_gemini", { task: "NOT_JSON", workdir: repo });
    expect(notJson.data).toMatchObject({ status: "failed", failure_kind: "other", exit_code: 0 });
    expect(String(notJson.data.response)).toContain("no JSON object");
    expect(String(notJson.data.response)).toContain("done: NOT_JSON"); // the sanitized excerpt
    const auth = await call(session, "delegate_to_gemini", { task: "FAIL_AUTH", workdir: repo });
    expect(auth.data).toMatchObject({ status: "auth_failed", failure_kind: "auth", exit_code: 1 });
    expect(String(auth.data.response)).toContain("agy session not readable in the jail");
  });

  test("a git upstream pointing at a local path outside the jail fails jail_git_config with the hint", async () => {
    const repo = makeRepo(root, "upstream", 0).repo;
    const other = makeRepo(root, "elsewhere", 0).repo;
    const git = (...a: string[]) => Bun.spawnSync(["git", ...a], { cwd: repo, env: testEnv() });
    git("remote", "add", "origin", other);
    git("config", "branch.main.remote", "origin");
    const r = await call(session, "delegate_to_gemini", { task: "ESCAPE", workdir: repo });
    expect(r.data).toMatchObject({ status: "failed", failure_kind: "jail_git_config", exit_code: null });
    expect(String(r.data.response)).toContain("git branch --unset-upstream");
  });

  test("timeout ends a hanging agy; cancel_gemini kills a running one", async () => {
    const repo = makeRepo(root, "hang", 0).repo;
    const t = await call(session, "delegate_to_gemini", { task: "HANG", workdir: repo, timeout_s: 1 });
    expect(t.data).toMatchObject({ status: "timeout", failure_kind: "timeout" });

    const sub = await call(session, "submit_gemini", { tasks: [{ task: "HANG", workdir: repo }] });
    const id = (sub.data.jobs as { id: string }[])[0]!.id;
    await until(async () => (await pollOne(session, id)).status === "running", "the job to run", 30_000);
    const c = await call(session, "cancel_gemini", { id });
    expect(c.data).toMatchObject({ status: "cancelled" });
    expect((await pollOne(session, id)).status).toBe("cancelled");
    expect((await call(session, "cancel_gemini", { id })).data.changed).toBe(false);
  });

  test("caps hold across 2 servers on one state dir: never more than 2 running, all done", async () => {
    const shared = join(root, "caps-state");
    const [a, b] = await Promise.all([
      startServer({ DELEGATE_GEMINI_STATE_DIR: shared }),
      startServer({ DELEGATE_GEMINI_STATE_DIR: shared }),
    ]);
    const repos = [0, 1, 2, 3, 4, 5].map((i) => makeRepo(root, `caps-${i}`, 0).repo);
    // Each job holds its slot until the test writes its gate file (the fake agy's AWAIT), so
    // how many run together is decided by the caps, not by how the polls fall between jobs.
    const GATE = ".caps-gate";
    const task = (i: number) => ({ task: `AWAIT=${GATE} job ${i}`, workdir: repos[i]! });
    const [sa, sb] = await Promise.all([
      call(a, "submit_gemini", { tasks: [task(0), task(1), task(2)] }),
      call(b, "submit_gemini", { tasks: [task(3), task(4), task(5)] }),
    ]);
    const ids = [...(sa.data.jobs as { id: string }[]), ...(sb.data.jobs as { id: string }[])].map((j) => j.id);
    let peak = 0;
    const views = await until(
      async () => {
        const vs = (await call(a, "poll_gemini", { ids })).data.jobs as JobView[];
        const running = vs.filter((v) => v.status === "running");
        peak = Math.max(peak, running.length);
        // The running jobs are let go once the cap is full (or once nothing waits behind them).
        if (running.length === 2 || (running.length > 0 && !vs.some((v) => v.status === "queued")))
          for (const v of running) writeFileSync(join(v.workdir, GATE), "");
        return vs.every((v) => v.status !== "queued" && v.status !== "running") ? vs : null;
      },
      "all 6 jobs to end",
      60_000,
    );
    console.log(`gemini caps: 6 jobs, 2 servers, peak running ${peak} (cap 2)`);
    // A job that did not finish says why, so a failure here names its cause.
    const outcomes = views.map((v) =>
      v.status === "done" ? "done" : `${v.status}: ${JSON.stringify(v).slice(0, 400)}`,
    );
    expect(outcomes).toEqual(Array(6).fill("done"));
    expect(peak).toBeLessThanOrEqual(2);
    expect(peak).toBe(2);
  });

  test("a SIGKILLed supervisor's running job reads killed_on_restart in dl wait, dl status and poll_gemini; nothing survives", async () => {
    const dir = join(root, "dead-state");
    const a = await startServer({ DELEGATE_GEMINI_STATE_DIR: dir });
    const repo = makeRepo(root, "dead", 0).repo;
    const sub = await call(a, "submit_gemini", { tasks: [{ task: "HANG", workdir: repo }] });
    const id = (sub.data.jobs as { id: string }[])[0]!.id;
    await until(async () => (await pollOne(a, id)).status === "running", "the job to run", 30_000);
    const store = JobStore.open(dir);
    try {
      const child = await until(() => store.get(id)?.child_pid, "the child to be recorded", 30_000);
      // The job's supervisor (its owner) runs the jail: an orphan is a job whose supervisor died.
      const serverPid = store.get(id)!.owner_pid!;
      expect(serverPid).not.toBe(a.transport.pid);
      // The jail's network forwarder is the supervisor's own child, with a parent-death signal.
      const pastas = await until(
        () => {
          const found = childrenNamed(serverPid, /^pas(ta|st)/);
          return found.length > 0 ? found : null;
        },
        "the job's pasta",
        30_000,
      );
      // Its server too: a live one would reap the orphan before the readers below look.
      for (const pid of [serverPid, a.transport.pid!]) {
        process.kill(pid, "SIGKILL");
        await until(() => identity(pid) === null, `process ${pid} to be gone`);
      }
      await until(() => pastas.every((p) => !alive(p)), "the forwarder to end with its server");
      // The jail died with its server (--die-with-parent): before any reap, the watcher
      // and the health check already read the job as the reference names it.
      const env = { DELEGATE_GEMINI_STATE_DIR: dir };
      const w = await runDl(["wait", id], env);
      expect(w.code).toBe(1);
      expect(w.stdout).toContain(`${id} KILLED_ON_RESTART`);
      const st = await runDl(["status", "--json"], env);
      const gemini = (JSON.parse(st.stdout).jobs as { provider: string; active: Record<string, unknown>[] }[]).find(
        (j) => j.provider === "gemini",
      );
      expect(gemini?.active).toContainEqual(
        expect.objectContaining({ id, status: "killed_on_restart", owner_alive: false }),
      );
      expect((await runDl(["status"], env)).stdout).toContain("1 orphaned: 1 killed_on_restart");
      expect(store.get(id)?.status).toBe("running"); // reading it recorded nothing

      // The next server records it at start, killing whatever of the jail's group was left.
      const b = await startServer({ DELEGATE_GEMINI_STATE_DIR: dir });
      await until(() => store.get(id)?.status !== "running", "the dead server's job to be reaped at start");
      expect(store.get(id)?.status).toBe("killed_on_restart");
      await until(() => !groupAlive(child), "every process of the jail's group to be gone");
      expect((await pollOne(b, id)).status).toBe("killed_on_restart");
      const after = await runDl(["wait", "--json", id], env);
      expect(after.code).toBe(1);
      expect(JSON.parse(after.stdout.trim())).toMatchObject({ id, status: "killed_on_restart" });
    } finally {
      store.close();
    }
  });

  test("a dead server's verified child still running is killed_on_restart", async () => {
    const dir = join(root, "orphan-state");
    const store = JobStore.open(dir);
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    // setsid: the orphan leads its own group, as a job's child does.
    const orphan = Bun.spawn(["setsid", "sleep", "300"], { stdout: "ignore", stderr: "ignore" });
    // Recorded once setsid has exec'd sleep, as the runner records a spawned child.
    const ident = await until(() => {
      const id = identity(orphan.pid);
      return id?.command === "sleep 300" ? id : null;
    }, "the orphan's identity");
    store.insertMany([
      {
        id: "gm-orphan0001",
        provider: "gemini",
        project: root,
        workdir: root,
        workspace_root: root,
        task: "t",
        created_at: Date.now(),
        status: "running",
        owner_pid: dead.pid,
        owner_start: "1@gone",
        server_id: "srv-dead",
      },
    ]);
    store.update(
      "gm-orphan0001",
      { child_pid: orphan.pid, child_pgid: orphan.pid, child_start: ident.startTime, child_cmd: ident.command },
      ["running"],
    );
    try {
      await startServer({ DELEGATE_GEMINI_STATE_DIR: dir });
      await until(() => store.get("gm-orphan0001")?.status !== "running", "the orphan's row to be reaped at start");
      expect(store.get("gm-orphan0001")?.status).toBe("killed_on_restart");
      expect(await orphan.exited).not.toBe(0); // killed, not left to sleep
    } finally {
      store.close();
      orphan.kill();
    }
  });
});

describe("Gemini tools without their gate or their binary", () => {
  test("without DELEGATE_GEMINI_ALLOW_DANGER=1 every Gemini tool refuses, saying why", async () => {
    const s = await startInProcess({
      DELEGATE_GEMINI_ALLOW_DANGER: undefined,
      DELEGATE_GEMINI_STATE_DIR: join(root, "off"),
    });
    const repo = makeRepo(root, "gate", 0).repo;
    const calls: [string, Record<string, unknown>][] = [
      ["delegate_to_gemini", { task: "x", workdir: repo }],
      ["submit_gemini", { tasks: [{ task: "x", workdir: repo }] }],
      ["poll_gemini", { ids: ["gm-x"] }],
      ["cancel_gemini", { id: "gm-x" }],
    ];
    for (const [name, args] of calls) {
      const r = await call(s, name, args);
      expect(r.isError).toBe(true);
      expect(r.text).toContain("DELEGATE_GEMINI_ALLOW_DANGER=1");
      expect(r.text).toContain("--dangerously-skip-permissions");
      expect(r.data.failure_kind).toBe("gemini_not_allowed");
    }
    const tools = (await s.client.listTools()).tools.filter((t) => t.name.endsWith("_gemini"));
    expect(tools.map((t) => t.name).sort()).toEqual([
      "cancel_gemini",
      "delegate_to_gemini",
      "poll_gemini",
      "submit_gemini",
    ]);
    // The privacy rule (issue 33's wording): submit_gemini says it whole, delegate_to_gemini in short.
    const described = (name: string) => tools.find((t) => t.name === name)?.description ?? "";
    expect(described("submit_gemini")).toContain("never put personal or health data in the task or under workdir");
    expect(described("delegate_to_gemini")).toContain("never personal or health data");
  });

  test("a missing agy: the server stays up and the tools say what to install", async () => {
    const s = await startInProcess({
      DELEGATE_AGY_BIN: join(root, "no-such-agy"),
      DELEGATE_GEMINI_STATE_DIR: join(root, "missing"),
    });
    const repo = makeRepo(root, "missing-bin", 0).repo;
    const r = await call(s, "submit_gemini", { tasks: [{ task: "x", workdir: repo }] });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("agy binary not found");
    expect(r.text).toContain("antigravity-cli");
    const d = await call(s, "delegate_to_gemini", { task: "x", workdir: repo });
    expect(d.text).toContain("agy binary not found");
    expect((await s.client.listTools()).tools.map((t) => t.name)).toContain("poll_gemini");
  });
});

describe("dl status: the jail and Gemini jobs", () => {
  type Report = {
    failed_checks: string[];
    gemini: { allowed: boolean; cli: { ok: boolean }; jail: { ok: boolean; kind: string; fix: string | null } };
    jobs: { provider: string; running: number; queued: number }[];
  };
  test.skipIf(skipBwrap)("shows the jail working, agy found and the gemini job store", async () => {
    const r = await runDl(["status", "--json"], serveEnv());
    const report = JSON.parse(r.stdout) as Report;
    expect(report.gemini).toMatchObject({ allowed: true, cli: { ok: true }, jail: { ok: true, kind: "bwrap" } });
    expect(report.jobs.map((j) => j.provider)).toContain("gemini");
    expect(report.failed_checks.filter((c) => c.includes("jail"))).toEqual([]);
    const text = await runDl(["status"], serveEnv());
    expect(text.stdout).toContain("gemini (agy):");
    expect(text.stdout).toMatch(/jail: ok/);
  });

  test("a jail that cannot start is a failed check naming the fix, when Gemini is allowed", async () => {
    const r = await runDl(["status", "--json"], serveEnv({ PATH: join(root, "no-bin-here") }));
    const report = JSON.parse(r.stdout) as Report;
    expect(r.code).toBe(1);
    expect(report.gemini.jail).toMatchObject({ ok: false, kind: "bwrap" });
    const check = report.failed_checks.find((c) => c.startsWith("jail for Gemini jobs"));
    expect(check).toContain("install bubblewrap");
  });
});
