import { afterAll, afterEach, beforeAll } from "bun:test";
import { join } from "node:path";
import type { PollView } from "../../../../src/jobs/engine/poll.ts";
import { type FakeResponses, startFakeResponses } from "../../../fixture/fake-responses.ts";
import { type CodexRig, type CodexRigOptions, markerRouter, startCodexRig } from "../../../helpers/codex-home.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { makeRepo, until } from "../../helpers.ts";

/**
 * What the files of the real-CLI job tests share (cli.test.ts, cli-throttle-timeout.test.ts:
 * one file was two long waits beside six short tests). Each test gets its own state dir and
 * CODEX_HOME; one fake per file serves them all, routed by markers in the task text
 * (test/helpers/codex-home.ts). Registers the file's hooks: call it once, at the top.
 */
export function codexCliRigs(prefix: string) {
  const root = tempDir(prefix);
  let fake: FakeResponses;
  const rigs: CodexRig[] = [];
  let n = 0;

  beforeAll(() => {
    fake = startFakeResponses(markerRouter());
  });
  // A test's services stop with it: an idle engine still ticks.
  afterEach(async () => {
    await Promise.all(rigs.splice(0).map((r) => r.stop()));
  });
  afterAll(async () => {
    await fake.stop();
  });

  async function start(dir: string, over: CodexRigOptions): Promise<CodexRig> {
    const r = await startCodexRig(dir, over, fake);
    rigs.push(r);
    return r;
  }

  /** A service on a folder of its own, stopped with the test. */
  const service = (over: CodexRigOptions = {}) => start(join(root, `t${++n}`), over);

  /** A service and, beside it, a repo with two worktrees (trees[0] is the repo). */
  async function rig(over: CodexRigOptions = {}) {
    const dir = join(root, `t${++n}`);
    const r = await start(dir, over);
    const { trees } = makeRepo(dir, "repo", 2);
    return { ...r, trees };
  }

  const view = async (r: CodexRig, id: string) => (await r.service.poll([id])).jobs[0] as PollView;
  const ended = (r: CodexRig, id: string, ms = 60_000) =>
    until(
      async () => {
        const v = await view(r, id);
        return ["queued", "running"].includes(v.status) ? null : v;
      },
      `job ${id} to end`,
      ms,
    );
  const requestsFor = (marker: string) => fake.requests.filter((q) => q.prompt.includes(marker));

  return { service, rig, view, ended, requestsFor };
}
