import { afterAll, describe, expect, test } from "bun:test";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { commandLine } from "../../src/cli/invoked-as.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";

/**
 * The predecessor's watcher was a command of its own, `delegate-wait`. A link of that
 * name to dist/dl must run `dl wait` with the same arguments, exits and output; any other
 * name keeps dl's own command line.
 */
const stateDir = join(tempDir("delegate-wait"), "codex");
const store = JobStore.open(stateDir);
afterAll(() => store.close());
const ended = { owner_pid: 1, owner_start: "1", server_id: "srv-gone", started_at: Date.now() - 2000 };
store.insertMany(
  ["cx-00000a0d01", "cx-00000a0f01"].map((id) => ({
    id,
    provider: "codex",
    project: "/p",
    workdir: "/p",
    workspace_root: "/p",
    task: "t",
    created_at: Date.now() - 5000,
    // They ran: a job ends from running (store/transitions.ts).
    status: "running" as const,
    ...ended,
  })),
);
store.update("cx-00000a0d01", { status: "done", exit_code: 0, ended_at: Date.now(), final_response: "ok" });
store.update("cx-00000a0f01", { status: "failed", exit_code: 1, ended_at: Date.now(), failure_kind: "other" });

const links = tempDir("links");
for (const name of ["delegate-wait", "dl-renamed"]) symlinkSync(requireBinary(), join(links, name));

async function run(argv: string[]) {
  const p = Bun.spawn(argv, {
    env: testEnv({ DELEGATE_CODEX_STATE_DIR: stateDir }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { stdout, stderr, code };
}

describe("delegate-wait (a link to dist/dl)", () => {
  test("waits like dl wait: one line per ended job, exit 0 for done and 1 for failed", async () => {
    const viaLink = await run([join(links, "delegate-wait"), "cx-00000a0d01"]);
    expect(viaLink.stderr).toBe("");
    expect(viaLink.code).toBe(0);
    expect(viaLink.stdout).toContain("cx-00000a0d01 DONE");
    const direct = await run([requireBinary(), "wait", "cx-00000a0d01"]);
    expect(viaLink.stdout).toBe(direct.stdout);

    const failed = await run([join(links, "delegate-wait"), "--json", "cx-00000a0f01"]);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout.trim())).toMatchObject({ id: "cx-00000a0f01", status: "failed" });
  });

  test("--help is dl wait's help; a bad flag is refused as dl wait refuses it", async () => {
    const help = await run([join(links, "delegate-wait"), "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("dl wait");
    expect(help.stdout).toContain("--timeout");
    expect(help.stdout).toContain("ln -s dl delegate-wait");
    const bad = await run([join(links, "delegate-wait"), "--timout", "5"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("dl wait:");
    expect(bad.stderr).toContain("--timeout");
  });

  test("under any other name the binary is plain dl", async () => {
    const renamed = await run([join(links, "dl-renamed"), "cx-00000a0d01"]);
    expect(renamed.code).toBe(2);
    expect(renamed.stderr).toContain("unknown command");
    const waited = await run([join(links, "dl-renamed"), "wait", "cx-00000a0d01"]);
    expect(waited.code).toBe(0);
  });
});

describe("commandLine", () => {
  test("maps only the name delegate-wait, by its last path component", () => {
    expect(commandLine("/usr/local/bin/delegate-wait", ["a"])).toEqual(["wait", "a"]);
    expect(commandLine("delegate-wait", [])).toEqual(["wait"]);
    expect(commandLine("/opt/delegate-wait/dl", ["status"])).toEqual(["status"]);
    expect(commandLine("./dl", ["wait", "x"])).toEqual(["wait", "x"]);
  });
});
