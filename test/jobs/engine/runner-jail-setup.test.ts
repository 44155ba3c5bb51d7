import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { sysIdentities } from "../../../src/jobs/engine/machine.ts";
import type { Provider } from "../../../src/jobs/engine/provider.ts";
import { type RunnerContext, runJob } from "../../../src/jobs/engine/runner.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import { markedEntry } from "../../../src/sys/jail-start.ts";
import { testProvider } from "../../fixture/jobs-provider.ts";
import { tempFolder } from "../../helpers/dl.ts";
import { skipBwrap } from "../../sandbox/jail-env.ts";
import { insertRunning, makeRepo } from "../helpers.ts";

/**
 * The runner's end of a jail that never started its command: the job fails
 * `jail_unavailable`, saying nothing ran, why (dl's own account of the set-up) and the
 * fix — not "killed by SIGKILL" with failure_kind other, as the child's exit would say.
 * And the converse: a jail that was still being set up when the job's time ran out did not
 * fail; dl stopped it, and the job ends `timeout`.
 */

const root = tempFolder("dl-runner-jail-setup");
afterAll(root.cleanup);
const stateDir = join(root.dir, "state");
const store = JobStore.open(stateDir);
afterAll(() => store.close());
const { repo } = makeRepo(root.dir, "proj", 0);

// bwrap waiting on its fds, with a forwarder that fails at once: the jail never gets its network.
const neverStarts: Provider = {
  ...testProvider,
  launch: (job) => ({
    argv: [Bun.which("bwrap") ?? "bwrap", "--unshare-all", "--unshare-user", "--info-fd", "3", "--block-fd", "4"]
      .concat(["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"])
      .concat(markedEntry(["sh", "-c", "echo RAN > ran.txt"])),
    env: { PATH: "/usr/bin:/bin" },
    cwd: job.workdir,
    jailNet: { forwarder: "/bin/false", maxProcs: 16 },
    jailMarked: true,
  }),
};

function ctx(): RunnerContext {
  return {
    store,
    provider: neverStarts,
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

test.skipIf(skipBwrap)("a jail whose set-up failed ends the job jail_unavailable with the cause and fix", async () => {
  const id = "tj-setup1";
  await runJob(insertRunning(store, id, repo), ctx(), new AbortController().signal);
  const row = store.get(id)!;
  expect(row).toMatchObject({ status: "failed", failure_kind: "jail_unavailable" });
  expect(row.final_response).toStartWith("the jail could not start, so the job did not run: pasta failed");
  expect(row.final_response).toContain("; fix: ");
  expect(await Bun.file(join(repo, "ran.txt")).exists()).toBe(false);
});

// bwrap with the real forwarder: a jail that would start, given the time.
const startsSlowly: Provider = {
  ...neverStarts,
  launch: async (job, at) => ({
    ...(await neverStarts.launch(job, at)),
    jailNet: { forwarder: Bun.which("pasta") ?? "pasta", maxProcs: 16 },
  }),
};

test.skipIf(skipBwrap)(
  "a job whose time runs out while its jail is being set up ends timeout, not jail_unavailable",
  async () => {
    const id = "tj-setup2";
    insertRunning(store, id, repo);
    // Its 60 s almost spent (as a job retried late in its budget): a few ms left, far less
    // than bwrap and pasta need to make the jail's namespaces and network.
    store.update(id, { started_at: Date.now() - 59_995 }, ["running"]);
    await runJob(store.get(id)!, { ...ctx(), provider: startsSlowly }, new AbortController().signal);
    const row = store.get(id)!;
    expect(row).toMatchObject({ status: "timeout", failure_kind: "timeout" });
    expect(row.final_response ?? "").not.toContain("the jail could not start");
    expect(await Bun.file(join(repo, "ran.txt")).exists()).toBe(false);
  },
);
