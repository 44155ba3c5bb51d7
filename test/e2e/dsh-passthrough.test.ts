import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * DELEGATE_DSH_ENV_PASSTHROUGH through dist/dl serve and the fake launcher: a variable
 * named there (a provider key) reaches the launcher, one not named does not, and the
 * key's value shows up in no tool result, dl wait or dl status output, job row or
 * server log, even when the launcher prints it.
 */
const LAUNCHER = join(import.meta.dir, "..", "fixture", "fake-dsh.sh");
const KEY_VAR = "DSH_PROVIDER_API_KEY";
const KEY_VALUE = "dsk-passthrough-4711-not-real";
const OTHER_VAR = "OTHER_PROVIDER_API_KEY";
const OTHER_VALUE = "osk-never-named-0815";

type JobView = { id: string; status: string; final_response: string | null };
let root: string;
let modelsFile: string;
const sessions: DlSession[] = [];
const seen: string[] = [];

beforeAll(() => {
  root = tempDir("dsh-pass");
  modelsFile = join(root, "dsh-models.json");
  writeFileSync(modelsFile, JSON.stringify({ models: { "ds-flash": { model: "deepseek-v4-flash", enabled: true } } }));
});
afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close()));
});

function serveEnv(tag: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DELEGATE_DSH_LAUNCHER: LAUNCHER,
    DELEGATE_DSH_STATE_DIR: join(root, `state-${tag}`),
    DELEGATE_DSH_MODELS_FILE: modelsFile,
    DELEGATE_DSH_STAGGER_S: "0",
    [KEY_VAR]: KEY_VALUE,
    [OTHER_VAR]: OTHER_VALUE,
    ...extra,
  };
}

/** Runs one task per directive set to its end; every answer is kept for the leak check. */
async function runJobs(s: DlSession, tag: string, directives: string[]): Promise<JobView[]> {
  const tasks = directives.map((d, i) => ({
    task: `${d}\nMS: 1\nDo the task.`,
    model: "ds-flash",
    workdir: makeRepo(root, `${tag}-${i}`, 0).repo,
  }));
  const sub = await callTool<{ jobs: { id: string }[] }>(s, "submit_dsh", { tasks });
  seen.push(JSON.stringify(sub));
  expect(sub.isError).toBeFalsy();
  const ids = sub.data.jobs.map((j) => j.id);
  return until(
    async () => {
      const p = await callTool<{ jobs: JobView[] }>(s, "poll_dsh", { ids });
      seen.push(JSON.stringify(p));
      return p.data.jobs.every((j) => j.status !== "queued" && j.status !== "running") ? p.data.jobs : null;
    },
    "the dsh jobs to end",
    60_000,
  );
}

/** Every file under `dir`, decoded leniently (SQLite pages included). */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .map((name) => join(dir, name))
    .filter((p) => statSync(p).isFile())
    .map((p) => readFileSync(p).toString("latin1"));
}

describe("DELEGATE_DSH_ENV_PASSTHROUGH", () => {
  test("the named key reaches the launcher and nothing else does; its value appears nowhere", async () => {
    const env = serveEnv("named", { DELEGATE_DSH_ENV_PASSTHROUGH: KEY_VAR });
    const s = await connectDl(env);
    sessions.push(s);
    const [named, other, leaky] = await runJobs(s, "named", [
      `KEY: ${KEY_VAR}`,
      `KEY: ${OTHER_VAR}`,
      `KEY: ${KEY_VAR}\nLEAK: ${KEY_VAR}\nMODE: crash`,
    ]);
    expect(named).toMatchObject({ status: "done" });
    expect(named!.final_response).toContain(`key ${KEY_VAR}: present`);
    expect(other!.final_response).toContain(`key ${OTHER_VAR}: absent`);
    // A launcher that prints its key: the answer still says what happened, without it.
    expect(leaky).toMatchObject({ status: "failed" });
    expect(leaky!.final_response).toContain("auth failed for key <redacted>");

    const ids = [named!.id, other!.id, leaky!.id];
    const wait = await runDl(["wait", "--json", ...ids], env);
    expect(wait.code).toBe(1);
    const status = await runDl(["status", "--json"], env);
    const dsh = (JSON.parse(status.stdout) as { config: { dsh: Record<string, unknown> } }).config.dsh;
    expect(dsh.env_passthrough).toEqual([KEY_VAR]);
    const channels = [
      ...seen,
      wait.stdout + wait.stderr,
      status.stdout + status.stderr,
      s.stderr(),
      ...filesUnder(join(root, "state-named")),
    ];
    expect(channels.filter((t) => t.includes(KEY_VALUE))).toEqual([]);
    expect(channels.filter((t) => t.includes(OTHER_VALUE))).toEqual([]);
  }, 90_000);

  test("unnamed, the key does not reach the launcher", async () => {
    const s = await connectDl(serveEnv("unnamed"));
    sessions.push(s);
    const [job] = await runJobs(s, "unnamed", [`KEY: ${KEY_VAR}`]);
    expect(job!.final_response).toContain(`key ${KEY_VAR}: absent`);
  }, 60_000);

  test("key-like names are allowed; a prefix or dl's own key is refused with exit 2", async () => {
    const ok = await runDl(
      ["status", "--json"],
      serveEnv("cfg", { DELEGATE_DSH_ENV_PASSTHROUGH: `${KEY_VAR},GITHUB_TOKEN` }),
    );
    expect(ok.stderr).not.toContain("DELEGATE_DSH_ENV_PASSTHROUGH");
    for (const bad of ["DSH_*", "DELEGATE_LOCAL_KEY"]) {
      const r = await runDl(["status"], serveEnv("cfg", { DELEGATE_DSH_ENV_PASSTHROUGH: bad }));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("DELEGATE_DSH_ENV_PASSTHROUGH");
    }
  });
});
