import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sysIdentities } from "../../../src/jobs/engine/machine.ts";
import type { Provider } from "../../../src/jobs/engine/provider.ts";
import { type RunnerContext, runJob } from "../../../src/jobs/engine/runner.ts";
import { prepareTreeGuard, treeReport } from "../../../src/sandbox/index.ts";
import { freshQuarantine } from "../../../src/sandbox/quarantine.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import type { JobRow } from "../../../src/store/types.ts";
import { testProvider } from "../../fixture/jobs-provider.ts";
import { tempFolder } from "../../helpers/dl.ts";
import { insertRunning, makeRepo } from "../helpers.ts";

/**
 * The runner's end of the tree guard: a job whose run planted a nested repository ends
 * `failed` with failure_kind `jail_git_tampered`, naming it, and it is moved out of the
 * workdir. The child here writes on the host directly, as it could if a mount failed:
 * the check after the run must not depend on the jail having held.
 */

const root = tempFolder("dl-runner-tamper");
afterAll(root.cleanup);
const stateDir = join(root.dir, "state");
const store = JobStore.open(stateDir);
afterAll(() => store.close());
const { repo } = makeRepo(root.dir, "proj", 0);

const tampering: Provider = {
  ...testProvider,
  async launch(job: JobRow, { jobDir }) {
    const env = { PATH: "/usr/bin:/bin", HOME: root.dir };
    const guard = await prepareTreeGuard(job.workdir, {
      home: root.dir,
      env,
      quarantine: () => freshQuarantine(join(jobDir, "q")),
    });
    const script = "mkdir -p sub && git -C sub init -q && echo hi > made.txt && echo 'ran the job'";
    const afterRun = async () => {
      const verdict = await guard.finish();
      return { failure: verdict.tamper, changes: { ...treeReport(verdict, guard.keptReadOnly) } };
    };
    return { argv: ["/bin/sh", "-c", script], env, cwd: job.workdir, afterRun };
  },
};

function ctx(): RunnerContext {
  return {
    store,
    provider: tampering,
    identities: sysIdentities,
    now: Date.now,
    graceMs: 300,
    outputCap: 1 << 20,
    jobsDir: join(stateDir, "jobs"),
    maxRetries: 0,
    retryDelayMs: () => 10,
    onPersistError: () => {},
  };
}

test("a run that made a nested repository fails jail_git_tampered, names it, and it is moved out", async () => {
  const id = "tj-tamper1";
  await runJob(insertRunning(store, id, repo), ctx(), new AbortController().signal);
  const row = store.get(id)!;
  expect(row.status).toBe("failed");
  expect(row.failure_kind).toBe("jail_git_tampered");
  expect(row.final_response).toContain("sub/.git (new)");
  expect(row.final_response).toContain("moved out of the workdir");
  expect(existsSync(join(repo, "sub/.git"))).toBe(false);
  expect(existsSync(join(stateDir, "jobs", id, "q/1/sub/.git/HEAD"))).toBe(true);
  expect(readFileSync(join(repo, "README"), "utf8")).toBe("proj");
  // What the run changed and what stayed read-only, measured by dl, kept in the row.
  const changes = JSON.parse(row.changes ?? "null");
  expect(changes.kept_read_only.paths).toContain(".git");
  expect(changes.kept_read_only.note).toContain("committed nothing");
  expect(changes.files_changed).toMatchObject({ added: 1, changed: 0, deleted: 0 });
  expect(changes.files_changed.files).toEqual([{ path: "made.txt", change: "added" }]);
});
