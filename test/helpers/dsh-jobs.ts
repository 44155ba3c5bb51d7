import { afterEach, beforeAll } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectDl, type DlSession, requireBinary, tempDir } from "./dl.ts";
import { connectInProcess, type InProcessSession } from "./in-process.ts";
import { until } from "./until.ts";

/**
 * dsh launcher jobs through the product (test/e2e/dsh*.test.ts): the compiled `dl serve`,
 * the SDK's Client, the fake launcher (test/fixture/fake-dsh.sh, same flags and
 * result.json as the real one) and `dl wait` as the completion signal. The fake appends
 * "start <out-dir> <pid>" and "end <out-dir>" to an EVENTS file, so concurrency is
 * measured by the launchers themselves, not sampled.
 */
export const LAUNCHER = join(import.meta.dir, "..", "fixture", "fake-dsh.sh");

export type JobView = {
  id: string;
  status: string;
  workdir: string;
  final_response: string | null;
  failure_kind: string | null;
  out_dir: string | null;
  diff_stat: string | null;
  tokens: unknown;
  wall_s: number | null;
  owner: { pid: number | null; alive: boolean };
  orphan_killed?: true;
};
export type Submitted = { jobs: { id: string; warnings: string[] }[]; watch: string; watch_hint: string };

/**
 * One dsh test file's set-up: its root and models file (made in beforeAll), and its
 * servers, each ended with the test that started it (an idle server still ticks its
 * engines) unless started by `keep`, which ends with the file.
 */
export function dshFile(prefix: string) {
  const f = { root: "", modelsFile: "" };
  const sessions: (DlSession | InProcessSession)[] = [];
  const kept: DlSession[] = [];
  beforeAll(() => {
    requireBinary();
    f.root = tempDir(prefix);
    f.modelsFile = join(f.root, "dsh-models.json");
    writeFileSync(
      f.modelsFile,
      JSON.stringify({
        models: {
          "ds-flash": { model: "deepseek-v4-flash", enabled: true },
          "ds-off": { model: "deepseek-v4-pro", enabled: false },
          "mimo-v2": { model: "xiaomi/mimo-v2", enabled: true },
        },
      }),
    );
  });
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
  });

  /**
   * The settings every server of the file runs with. A launcher that ignores SIGTERM gets
   * its SIGKILL after 0.5 s (DELEGATE_JOB_KILL_GRACE), not 5: the same kill, sooner.
   */
  const serverEnv = (stateDir: string, extra: Record<string, string>): Record<string, string> => ({
    DELEGATE_DSH_LAUNCHER: LAUNCHER,
    DELEGATE_DSH_STATE_DIR: stateDir,
    DELEGATE_DSH_MODELS_FILE: f.modelsFile,
    DELEGATE_DSH_STAGGER_S: "0.05",
    DELEGATE_JOB_KILL_GRACE: "0.5",
    ...extra,
  });

  return {
    get root() {
      return f.root;
    },
    get modelsFile() {
      return f.modelsFile;
    },
    /** A server on `stateDir` with the fake launcher and the models file; caps as given. */
    async serve(stateDir: string, extra: Record<string, string> = {}): Promise<DlSession> {
      const s = await connectDl(serverEnv(stateDir, extra));
      sessions.push(s);
      return s;
    },
    /**
     * `serve`'s set-up in this process (helpers/in-process.ts): for the tests of what a
     * tool answers (refusals, the tool list), which start no launcher.
     */
    async serveInProcess(stateDir: string, extra: Record<string, string> = {}): Promise<InProcessSession> {
      const s = await connectInProcess(serverEnv(stateDir, extra));
      sessions.push(s);
      return s;
    },
    /** A server of default settings several tests of the file share; it ends with the file (`closeKept`). */
    async keep(stateDir: string): Promise<DlSession> {
      const s = await connectDl(serverEnv(stateDir, {}));
      kept.push(s);
      return s;
    },
    async closeKept(): Promise<void> {
      await Promise.all(kept.splice(0).map((s) => s.close()));
    },
  };
}

/** The fake's directives, then the task text. `await`: the launcher works only once that file exists in its workdir. */
export function task(
  workdir: string,
  d: { mode?: string; ms?: number; events?: string; await?: string },
  extra: object = {},
) {
  const lines = [`MODE: ${d.mode ?? "ok"}`, `MS: ${d.ms ?? 50}`];
  if (d.events) lines.push(`EVENTS: ${d.events}`);
  if (d.await) lines.push(`AWAIT: ${d.await}`);
  return { task: `${lines.join("\n")}\nDo the task.`, model: "ds-flash", workdir, ...extra };
}

/** `out`: the job's out-dir, in the launcher's argv (how a test finds it on the host: as root it sees its own pid namespace, so `pid` is that namespace's). */
type Event = { kind: "start" | "end"; id: string; out: string; pid?: number };
export function events(file: string): Event[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [kind, out, pid] = l.split(" ");
      const id = /\/jobs\/(dsh-[0-9a-f]+)\/out$/.exec(out!)?.[1] ?? "?";
      return { kind: kind as Event["kind"], id, out: out!, pid: pid ? Number(pid) : undefined };
    });
}

/** The most launchers alive at once, overall and within each group `groupOf` names. */
export function peaks(evs: Event[], groupOf: (id: string) => string = () => "all"): { all: number; group: number } {
  const live = new Set<string>();
  let all = 0;
  let group = 0;
  for (const e of evs) {
    if (e.kind === "start") live.add(e.id);
    else live.delete(e.id);
    all = Math.max(all, live.size);
    const counts = new Map<string, number>();
    for (const id of live) counts.set(groupOf(id), (counts.get(groupOf(id)) ?? 0) + 1);
    group = Math.max(group, ...counts.values(), 0);
  }
  return { all, group };
}

export async function pollUntilEnded(s: DlSession, ids: string[], ms = 60_000): Promise<JobView[]> {
  return until(
    async () => {
      const jobs = (await callTool<{ jobs: JobView[] }>(s, "poll_dsh", { ids })).data.jobs;
      return jobs.every((j) => !["queued", "running"].includes(j.status)) ? jobs : null;
    },
    `jobs ${ids.join(" ")} to end`,
    ms,
  );
}

/**
 * Waits until `n` launchers have told `log` they started, then opens the AWAIT gate
 * (`name`) in every workdir: the jobs that hold the slots end only once the test has
 * seen the cap filled, however slowly each job's supervisor started.
 */
export async function openGatesAfterStarts(log: string, n: number, workdirs: string[], name: string): Promise<void> {
  await until(() => events(log).filter((e) => e.kind === "start").length >= n, `${n} launchers to start`);
  for (const w of workdirs) writeFileSync(join(w, name), "");
}
