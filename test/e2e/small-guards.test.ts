import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { callTool, type DlSession, pollUntilEnded, requireBinary, runDl, sessionPool, tempDir } from "../helpers/dl.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * The smaller holes of issue 20, each through dist/dl: one state dir for two providers,
 * job folders left behind by `dl reap`, model names that dodge the allowlist or the MiMo
 * refusal (or reach the launcher's argv as a flag), and terminal control in agy's answer.
 */
const LAUNCHER = join(import.meta.dir, "..", "fixture", "fake-dsh.sh");
const FAKE_AGY = join(import.meta.dir, "..", "fixture", "fake-agy.sh");
const sessions = sessionPool();
let root: string;

beforeAll(() => {
  requireBinary();
  root = tempDir("small-guards");
});
afterAll(async () => {
  await sessions.closeAll();
});

const serve = (env: Record<string, string>) => sessions.serve(env);

type Job = { id: string; status: string; final_response: string | null };

describe("one state dir for two providers is a configuration error", () => {
  test("both given: dl status and dl serve exit 2 naming both variables", async () => {
    const shared = join(root, "shared");
    const env = { DELEGATE_CODEX_STATE_DIR: shared, DELEGATE_DSH_STATE_DIR: shared };
    for (const args of [["status"], ["serve"]]) {
      const r = await runDl(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("DELEGATE_CODEX_STATE_DIR and DELEGATE_DSH_STATE_DIR are the same folder");
    }
  });

  test("one given, equal to another provider's default: named as that default", async () => {
    const r = await runDl(["status"], { DELEGATE_AGENT_STATE_DIR: join(process.env.HOME!, ".gemini-jobs") });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "DELEGATE_GEMINI_STATE_DIR (its default) and DELEGATE_AGENT_STATE_DIR are the same folder",
    );
  });
});

describe("dsh through dist/dl serve", () => {
  let s: DlSession;
  let stateDir: string;
  let repo: string;
  beforeAll(async () => {
    stateDir = join(root, "dsh-state");
    const models = join(root, "dsh-models.json");
    writeFileSync(
      models,
      JSON.stringify({
        models: {
          "ds-flash": { model: "  deepseek-v4-flash ", enabled: true },
          " MiMo-Pro": { model: " xiaomi-mimo-v2-pro", enabled: true },
          sneaky: { model: " MiMo-v2-flash", enabled: true },
          flagged: { model: "--dangerous-flag", enabled: true },
          "-o/etc/x": { model: "glm-5-air", enabled: true },
        },
      }),
    );
    s = await serve({
      DELEGATE_DSH_LAUNCHER: LAUNCHER,
      DELEGATE_DSH_STATE_DIR: stateDir,
      DELEGATE_DSH_MODELS_FILE: models,
      DELEGATE_DSH_STAGGER_S: "0",
    });
    repo = makeRepo(root, "dsh-repo").repo;
  });

  const submit = (model: string) =>
    callTool<{ jobs: { id: string }[] }>(s, "submit_dsh", {
      tasks: [{ task: "MODE: ok\nMS: 10\nGo.", model, workdir: repo }],
    });

  test("model names are trimmed and case-folded before the allowlist: ' DS-Flash ' runs the file's alias", async () => {
    const r = await submit(" DS-Flash ");
    expect(r.isError).toBeFalsy();
    const job = await pollUntilEnded<Job>(s, "poll_dsh", r.data.jobs[0]!.id);
    expect(job.status).toBe("done");
    // The fake launcher answers with the --model it was given: the alias as the file spells it.
    expect(job.final_response).toBe("Did the task with ds-flash.");
  });

  test("MiMo in any spelling is refused, by alias or real name, and so is a file entry with spaces", async () => {
    for (const m of [" MIMO-pro", "mimo-pro", "sneaky", " MiMo-v2-flash ", "ＭｉＭｏ-v2"]) {
      const r = await submit(m);
      expect(r.isError).toBe(true);
      expect(r.text).toContain("Xiaomi MiMo models may not be dispatched automatically");
    }
  });

  test('a name starting with "-" is refused, asked for or listed in the file', async () => {
    // "glm-5-air" is the real name of an entry whose alias (what the launcher gets) is a flag.
    for (const m of ["-rf", " --model=x", "flagged", "glm-5-air"]) {
      const r = await submit(m);
      expect(r.isError).toBe(true);
      expect(r.text).toContain('may not start with "-"');
    }
  });

  test("dl reap deletes the folders of the rows it prunes; a dry run and a tampered id delete nothing", async () => {
    const r = await submit("ds-flash");
    const id = r.data.jobs[0]!.id;
    expect((await pollUntilEnded<Job>(s, "poll_dsh", id)).status).toBe("done");
    const dir = join(stateDir, "jobs", id);
    expect(existsSync(join(dir, "out", "result.json"))).toBe(true);
    // A row whose id climbs out of jobs/ (a tampered store): its "folder" must survive.
    const victim = join(stateDir, "victim");
    mkdirSync(victim, { recursive: true });
    const store = JobStore.open(stateDir);
    try {
      store.insertMany([
        {
          id: "dsh-x/../../victim",
          provider: "dsh",
          project: repo,
          workdir: repo,
          workspace_root: repo,
          task: "t",
          created_at: 1,
          status: "done",
        },
      ]);
      store.update("dsh-x/../../victim", { ended_at: 2 });
    } finally {
      store.close();
    }
    const env = { DELEGATE_DSH_STATE_DIR: stateDir, DELEGATE_JOB_RETENTION_DAYS: "0" };
    const dry = await runDl(["reap", "--dry-run"], env);
    expect(dry.code).toBe(0);
    expect(existsSync(dir)).toBe(true);
    const real = await runDl(["reap"], env);
    expect(real.code).toBe(0);
    // This job, the earlier one of this suite, and the tampered row.
    expect(real.stdout).toContain("pruned 3 finished");
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(join(stateDir, "jobs"))).toEqual([]);
    expect(existsSync(victim)).toBe(true);
  });
});

describe.skipIf(skipBwrap)("agy's answer through dist/dl serve, fake agy in the real jail", () => {
  test("terminal control in the response (CSI, OSC ended or not, 8-bit C1, bidi) never reaches the answer", async () => {
    const s = await serve({
      DELEGATE_AGY_BIN: FAKE_AGY,
      DELEGATE_GEMINI_STATE_DIR: join(root, "gemini-state"),
      DELEGATE_GEMINI_ALLOW_DANGER: "1",
    });
    const repo = makeRepo(root, "agy-repo").repo;
    const r = await callTool<{ response: string; status: string }>(s, "delegate_to_gemini", {
      task: "ANSI",
      workdir: repo,
    });
    expect(r.data.status).toBe("done");
    const answer = r.data.response;
    expect(answer).toBe("red link evil done");
    for (const bad of ["\x1b", "\x9b", "\x9d", "\u202e", "pwned-title", "c1-title", "never-ended", "evil.test", "2J"])
      expect(answer).not.toContain(bad);
  }, 60_000);
});
