import { afterAll, describe, expect, test } from "bun:test";
import { realpathSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { agyArgv } from "../../src/jobs/providers/gemini/task.ts";
import { jailPolicyFor } from "../../src/sandbox/index.ts";
import type { JobRow } from "../../src/store/types.ts";
import { tempDir } from "../helpers/dl.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { runInJail, skipBwrap } from "./jail-env.ts";

/**
 * The reference's second layer, agy's own `--sandbox`, inside dl's jail: measured here
 * on Linux, where agy's sandbox is a namespace sandbox (nsjail) and dl's jail forbids
 * every new user namespace (bwrap --disable-userns, the guard against a nested namespace
 * handing the job capabilities over its own mounts). So dl does not pass it on Linux; on
 * macOS a process under a sandbox-exec profile with any deny cannot apply a sandbox of
 * its own (forbidden-sandbox-reinit), so it is not passed there either. docs/SECURITY.md.
 */

const FAKE_AGY = new URL("../fixture/fake-agy.sh", import.meta.url).pathname;
const home = realpathSync(tempDir("agy-sandbox", process.env.HOME));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const job = { task: "hello", effort: "low", params: null } as unknown as JobRow;

test("agy's argv never carries --sandbox (Linux nor macOS): dl's jail is the one layer", () => {
  const argv = agyArgv("/usr/bin/agy", job);
  expect(argv).not.toContain("--sandbox");
  expect(argv.slice(0, 3)).toEqual(["/usr/bin/agy", "-p", "hello"]);
});

describe.skipIf(skipBwrap)("inside dl's real jail", () => {
  const policy = (workdir: string) => (g?: Parameters<typeof jailPolicyFor>[1]) =>
    jailPolicyFor({ platform: "linux", home, workdir, stateDirs: [], extraReadPaths: [dirname(FAKE_AGY)] }, g);
  const env = { PATH: "/usr/bin:/bin", HOME: home, LANG: "C" };

  test("no sandbox of a namespace can be made: a user namespace and a nested bwrap are refused", async () => {
    const dir = makeRepo(home, "measure", 0).repo;
    const script = "unshare --user --map-root-user true; echo userns=$?; bwrap --ro-bind / / true; echo bwrap=$?";
    const { run } = await runInJail(policy(dir), ["/bin/sh", "-c", script], env);
    const out = run.stdout.text() + run.stderr.text();
    expect(out).toContain("userns=1");
    expect(out).toContain("bwrap=1");
    expect(out).toMatch(/No space left on device|max_\*_namespaces exceeded/);
  });

  test("so agy --sandbox (the fake does what the real one does) fails every tool it runs", async () => {
    const dir = makeRepo(home, "fake", 0).repo;
    const argv = [FAKE_AGY, "-p", "ESCAPE", "--output-format", "json", "--sandbox"];
    const { run } = await runInJail(policy(dir), argv, env);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.text()).toContain("sandbox: tool failed: could not create the sandbox");
    expect(await Bun.file(join(dir, "agy-wrote.txt")).exists()).toBe(false);
    // Without --sandbox the same run's tools work in dl's jail.
    const plain = await runInJail(policy(dir), argv.slice(0, -1), env);
    expect(plain.run.stdout.text()).toContain("agy-wrote.txt: written");
  });
});
