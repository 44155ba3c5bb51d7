import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseAgyOutput } from "../../src/jobs/providers/gemini/output.ts";
import { ensureAgyStateDirs, jailPolicyFor, wrapCommand } from "../../src/sandbox/index.ts";
import { probeJail } from "../../src/sandbox/probe.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * The generated profile, run for real by sandbox-exec: macOS only. The test HOME lives
 * under /private/var/folders, which the profile lets any CLI read (the reference measured
 * that agy, python3, git and curl need it), so "another project" is not planted here; the
 * Linux test covers it. What is checked: HOME's secrets, writes outside, exec of open.
 */

const FAKE_AGY = new URL("../fixture/fake-agy.sh", import.meta.url).pathname;

function plant(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o600 });
}

describe.skipIf(process.platform !== "darwin")("fake agy inside the real sandbox-exec profile", () => {
  test("HOME's secrets unreadable, writes outside refused, open not executable; workdir and agy state writable", async () => {
    const home = tempDir("sbx-home", process.env.HOME ?? "/tmp");
    const workdir = join(home, "code/app");
    const tmp = join(home, "run-tmp");
    mkdirSync(workdir, { recursive: true });
    mkdirSync(tmp);
    plant(join(home, ".ssh/id_rsa"), "SSH-PRIVATE-KEY");
    plant(join(home, ".gemini/settings.json"), '{"original":true}');
    const policy = jailPolicyFor({
      platform: "darwin",
      home,
      workdir,
      tmpDir: tmp,
      stateDirs: [],
      extraReadPaths: [dirname(FAKE_AGY)],
    });
    ensureAgyStateDirs(policy);
    const probe = await probeJail({ platform: "darwin", path: "/usr/bin:/bin", cwd: workdir });
    const outside = join(home, "elsewhere.txt");
    const task = `ESCAPE write=${outside}`;
    const env = { PATH: "/usr/bin:/bin", HOME: home, LANG: "C" };
    const w = wrapCommand(policy, [FAKE_AGY, "-p", task, "--output-format", "json"], env, probe);
    const r = await runGroup({ argv: w.argv, cwd: workdir, env: w.env, timeoutMs: 30_000 });
    const outcome = parseAgyOutput({ stdout: r.stdout.text(), stderr: r.stderr.text(), exitCode: r.exitCode });
    if (outcome.status !== "done") throw new Error(`agy failed: ${JSON.stringify(outcome)}`);
    expect(outcome.response).not.toContain("LEAKED");
    expect(outcome.response).toContain(`read ${home}/.ssh/id_rsa: blocked`);
    expect(outcome.response).toContain(`write ${home}/.gemini/settings.json: blocked`);
    expect(outcome.response).toContain("exec /usr/bin/open: blocked");
    expect(existsSync(outside)).toBe(false);
    expect(readFileSync(join(home, ".gemini/settings.json"), "utf8")).toBe('{"original":true}');
    expect(readFileSync(join(workdir, "agy-wrote.txt"), "utf8")).toBe("written by fake agy\n");
    expect(existsSync(join(home, ".gemini/antigravity-cli/brain/note.txt"))).toBe(true);
  });
});
