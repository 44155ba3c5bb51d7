import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { registerStores } from "../../src/jobs/shell/store-registry.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { CODEX_BIN } from "../helpers/codex-home.ts";
import { callTool, connectDl, requireBinary, runDl, tempDir } from "../helpers/dl.ts";

/**
 * What the shell commands print for a person, through dist/dl: every refusal names the
 * next command, nothing is silent, a flag is named as it is typed, a provider with two
 * stores is told apart by folder.
 */
let fake: FakeModel;
let agents: string;
beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel();
  agents = tempDir("out-agents");
  writeFileSync(join(agents, "helper.md"), "---\nname: helper\n---\nHelp.\n");
});
afterAll(() => fake?.stop());

/** A HOME of its own, so the stores registry holds only this test's stores. */
const ownHome = () => ({ HOME: tempDir("out-home"), XDG_CACHE_HOME: undefined, XDG_CONFIG_HOME: undefined });

describe("shell output", () => {
  test("dl wait --all with nothing to wait for says so", async () => {
    const r = await runDl(["wait", "--all"], ownHome());
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("nothing to wait for: no job is queued or running on this machine");
  });

  test("dl version points at dl --version", async () => {
    const r = await runDl(["version"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("did you mean dl --version?");
  });

  test("dl serve --check ends with the absolute command a host runs", async () => {
    const r = await runDl(["serve", "--check"], { DELEGATE_LOCAL_URL: fake.anthropicUrl });
    expect(r.stdout.trimEnd().split("\n").at(-1)).toMatch(new RegExp(`${requireBinary()} serve( --check again)?$`));
  });

  test("dl run names --continue-from as it is typed, says how to follow up, and a missing conversation leaves no lock", async () => {
    const agentState = tempDir("out-agent-state");
    const env = {
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_AGENTS_DIR: agents,
      DELEGATE_AGENT_STATE_DIR: agentState,
    };
    for (const id of ["cv-00000000000000000000", "cv-bad"]) {
      const bad = await runDl(["run", "helper", "more", "--continue-from", id], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--continue-from");
      expect(bad.stderr).not.toMatch(/(^|[^-])continue_from/);
    }
    expect(readdirSync(join(agentState, "conversations")).filter((f) => f.endsWith(".lock"))).toEqual([]);
    fake.always(reply.text("first answer"));
    const ok = await runDl(["run", "helper", "go", "--workdir", tempDir("run-w")], env);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/to follow up: dl run AGENT TASK --continue-from cv-[0-9a-f]{20}/);
  });

  test("a single task's refusal is not numbered; in a list of several it is", async () => {
    const s = await connectDl({ DELEGATE_LOCAL_URL: fake.anthropicUrl, DELEGATE_LOCAL_AGENTS_DIR: agents });
    try {
      const one = await callTool(s, "submit_agent", {
        tasks: [{ agent_name: "nobody", task: "x", workdir: tempDir("w1") }],
      });
      expect(one.isError).toBe(true);
      expect(one.text).not.toMatch(/^task 1/);
      const two = await callTool(s, "submit_agent", {
        tasks: [
          { agent_name: "helper", task: "x", workdir: tempDir("w2") },
          { agent_name: "nobody", task: "x", workdir: tempDir("w3") },
        ],
      });
      expect(two.text).toMatch(/^task 2: /);
    } finally {
      await s.close();
    }
  });

  test("a fresh Codex state dir: the first Codex call logs no spurious 'could not start codex'", async () => {
    const home = ownHome();
    const s = await connectDl({ ...home, DELEGATE_CODEX_BIN: CODEX_BIN, DELEGATE_LOG_LEVEL: "warn" });
    try {
      const r = await callTool<{ jobs: { status: string }[] }>(s, "poll_codex", { ids: ["cx-0000000000"] });
      expect(r.data.jobs[0]?.status).toBe("unknown");
      expect(s.stderr()).not.toContain("could not start");
    } finally {
      await s.close();
    }
  });

  test("two stores of one provider are named by folder in dl status, dl status --watch and dl reap", async () => {
    const home = ownHome();
    const own = join(home.HOME, ".agent-jobs");
    const moved = tempDir("moved-agent-jobs");
    for (const dir of [own, moved]) JobStore.open(dir, { provider: "agent" }).close();
    registerStores(join(home.HOME, ".cache", "claude-delegate-local", "stores"), [
      { provider: "agent", stateDir: moved },
    ]);
    const status = await runDl(["status"], home);
    // Each named by its folder, the counts of every store in one column.
    const section = status.stdout.slice(status.stdout.indexOf("\njobs:\n"));
    const rows = section
      .slice(0, section.indexOf("\n\n", 1))
      .split("\n")
      .filter((l) => / running, /.test(l));
    const column = new Set(rows.map((l) => l.search(/ \d+ running/)));
    expect(rows.find((l) => l.startsWith(`  agent (${own}) `))).toBeDefined();
    expect(rows.find((l) => l.startsWith(`  agent (${moved}) `))).toBeDefined();
    expect(column.size).toBe(1);
    // dl status --watch (one snapshot without a terminal) names them the same way.
    const watch = await runDl(["status", "--watch"], home);
    expect(watch.stdout).toMatch(new RegExp(`^  agent \\(${own}\\) +\\d+ running`, "m"));
    expect(watch.stdout).toMatch(new RegExp(`^  agent \\(${moved}\\) +\\d+ running`, "m"));
    expect(watch.stdout).not.toMatch(/^ {2}agent +\d+ running/m);
    const reap = await runDl(["reap", "--dry-run"], home);
    expect(reap.stdout).toContain(`agent (${moved}): would end 0 job(s)`);
    expect(reap.stdout).not.toMatch(/^agent:/m);
  });
});
