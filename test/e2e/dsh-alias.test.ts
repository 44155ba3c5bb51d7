import { afterAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, tempDir } from "../helpers/dl.ts";
import { connectInProcess, type InProcessSession } from "../helpers/in-process.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * The launcher looks `--model` up in its own models.json, which by default is the very
 * file dl reads (~/.config/neola-lab/dsh-models.json). So dl hands it the alias, whether
 * the task named the alias or the entry's real model; the fake launcher refuses a name
 * that is not a key there, as the real one does.
 */
const LAUNCHER = join(import.meta.dir, "..", "fixture", "fake-dsh.sh");
let s: InProcessSession | undefined;
afterAll(async () => {
  await s?.close();
});

test("submit_dsh by alias or by real name: the launcher gets the alias and the job is done", async () => {
  const home = tempDir("dsh-alias-home");
  mkdirSync(join(home, ".config", "neola-lab"), { recursive: true });
  writeFileSync(
    join(home, ".config", "neola-lab", "dsh-models.json"),
    JSON.stringify({ models: { "ds-flash": { model: "deepseek-v4-flash", enabled: true } } }),
  );
  s = await connectInProcess({
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    DELEGATE_DSH_LAUNCHER: LAUNCHER,
    DELEGATE_DSH_STATE_DIR: join(home, "dsh-state"),
    DELEGATE_DSH_STAGGER_S: "0",
  });
  const root = tempDir("dsh-alias");
  const tasks = ["ds-flash", "deepseek-v4-flash"].map((model, i) => ({
    task: "MS: 1\nDo the task.",
    model,
    workdir: makeRepo(root, `r${i}`, 0).repo,
  }));
  const sub = await callTool<{ jobs: { id: string }[] }>(s, "submit_dsh", { tasks });
  expect(sub.isError).toBeFalsy();
  const ids = sub.data.jobs.map((j) => j.id);
  const jobs = await until(
    async () => {
      const p = await callTool<{ jobs: { status: string; model: string; final_response: string | null }[] }>(
        s!,
        "poll_dsh",
        { ids },
      );
      return p.data.jobs.every((j) => j.status !== "queued" && j.status !== "running") ? p.data.jobs : null;
    },
    "both dsh jobs to end",
    60_000,
  );
  for (const j of jobs) {
    expect(j).toMatchObject({ status: "done", model: "deepseek-v4-flash" });
    expect(j.final_response).toBe("Did the task with ds-flash.");
  }
}, 90_000);
