import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectDl, requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { lineReader } from "../helpers/lines.ts";

/**
 * The per-user settings file through dist/dl: every process reads it (dl serve, the shell
 * commands, the watcher), the environment wins over it, a file others could read or
 * write is refused, and where a host still gives its server another cache dir, a shell's
 * dl status sees that server's pools and names both dirs.
 */
let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel({ models: ["qwen-3-8-max"] });
});
afterAll(() => fake?.stop());

function home(settings?: string, mode = 0o600): { dir: string; env: Record<string, string | undefined> } {
  const dir = tempDir("settings-home");
  if (settings !== undefined) {
    mkdirSync(join(dir, ".config", "dl"), { recursive: true });
    const file = join(dir, ".config", "dl", "settings.env");
    writeFileSync(file, settings);
    chmodSync(file, mode);
  }
  const env = { HOME: dir, XDG_CACHE_HOME: undefined, XDG_CONFIG_HOME: undefined, CODEX_HOME: undefined };
  return { dir, env };
}

describe("the settings file", () => {
  test("a file others may read is refused with the command that fixes it; a typo names its line", async () => {
    const open = home("DELEGATE_LOCAL_MODEL=m\n", 0o644);
    for (const cmd of [["status"], ["jobs"], ["wait", "--all", "--timeout", "1"]]) {
      const r = await runDl(cmd, open.env);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`run chmod 600 ${join(open.dir, ".config", "dl", "settings.env")}`);
    }
    const typo = home("# mine\nDELEGATE_LOCAL_MODEL=m\nDELEGATE_LOCAL_MODLE=n\n");
    const r = await runDl(["status"], typo.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("settings.env line 3: DELEGATE_LOCAL_MODLE is not a dl setting");
    const job = home("DELEGATE_RUN_PROVIDER_KEY=k\n");
    expect((await runDl(["status"], job.env)).stderr).toContain("one job's endpoint");
  });

  test("a bad value in the file is refused by name, saying it came from the file, a secret never shown", async () => {
    const h = home("DELEGATE_WAIT_INTERVAL=soon\nDELEGATE_LOCAL_KEY=sk-file-secret-123456\n");
    const r = await runDl(["wait", "--all", "--timeout", "1"], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('DELEGATE_WAIT_INTERVAL="soon" (set in');
    const bad = home("DELEGATE_LOCAL_URL=ftp://x\nDELEGATE_BIFROST_VK_LOCAL=s\n");
    expect((await runDl(["status"], bad.env)).stderr).toContain("DELEGATE_LOCAL_URL");
  });

  test("dl serve reads it: a server started with no variable delegates to the file's gateway and model", async () => {
    const agents = tempDir("settings-agents");
    writeFileSync(join(agents, "helper.md"), "---\nname: helper\n---\nHelp.\n");
    const h = home(
      `DELEGATE_LOCAL_URL=${fake.anthropicUrl}\nDELEGATE_LOCAL_MODEL="qwen-3-8-max"\nDELEGATE_LOCAL_AGENTS_DIR=${agents}\n`,
    );
    fake.reset();
    fake.always(reply.text("from the file's gateway"));
    const s = await connectDl({ ...h.env, DELEGATE_LOCAL_URL: "", DELEGATE_LOCAL_MODEL: undefined });
    try {
      const res = await s.client.callTool(
        { name: "delegate_to_local_agent", arguments: { agent_name: "helper", task: "go", workdir: tempDir("w") } },
        { timeout: 60_000 },
      );
      expect(res.structuredContent).toMatchObject({ success: true, model_used: "qwen-3-8-max" });
    } finally {
      await s.close();
    }
  });

  test("a server whose cache dir came only from its host's environment: a shell's dl status sees its slot in use and names both dirs", async () => {
    const h = home("");
    const hostCache = tempDir("host-cache");
    const agents = tempDir("settings-agents");
    writeFileSync(join(agents, "helper.md"), "---\nname: helper\n---\nHelp.\n");
    fake.reset();
    fake.always(reply.hang());
    const s = await connectDl({
      ...h.env,
      DELEGATE_CACHE_DIR: hostCache,
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_AGENTS_DIR: agents,
    });
    const call = s.client
      .callTool(
        {
          name: "delegate_to_local_agent",
          arguments: { agent_name: "helper", task: "go", workdir: tempDir("w"), model: "qwen-3-8-max" },
        },
        { timeout: 60_000 },
      )
      .catch(() => undefined);
    try {
      await fake.waitFor(() => fake.inFlight("qwen-3-8-max") === 1, 30_000);
      const r = await runDl(["status", "--json"], h.env);
      const report = JSON.parse(r.stdout);
      const own = report.pools.find((p: { bucket: string }) => p.bucket === "qwen-3-8-max");
      expect(own.in_use).toBe(0);
      expect(report.other_cache_dirs).toHaveLength(1);
      const other = report.other_cache_dirs[0];
      expect(other.cache_dir).toBe(hostCache);
      expect(other.pools.find((p: { bucket: string }) => p.bucket === "qwen-3-8-max").in_use).toBe(1);
      const check = report.failed_checks.find((f: string) => f.includes(hostCache));
      expect(check).toContain(report.config.paths.cache_dir);
      expect(check).toContain("settings.env");
      expect(r.code).toBe(1);
      const text = await runDl(["status"], h.env);
      expect(text.stdout).toContain(`pools of dl serve pid`);
      expect(text.stdout).toMatch(/qwen-3-8-max\s+1\/\d+ in use/);
      // A shell dl run then says, before it takes a slot, that the two pools do not count each other's.
      const run = Bun.spawn(
        [requireBinary(), "run", "helper", "go", "--workdir", tempDir("w"), "--model", "qwen-3-8-max"],
        {
          env: testEnv({ ...h.env, DELEGATE_LOCAL_URL: fake.anthropicUrl, DELEGATE_LOCAL_AGENTS_DIR: agents }),
          stderr: "pipe",
          stdout: "ignore",
        },
      );
      const line = lineReader(run.stderr);
      // Its lines up to the first turn (the warning comes before the slot is taken).
      const said: string[] = [];
      for (let l = await line(); l !== null && !l.includes("turn 1 started"); l = await line()) said.push(l);
      run.kill("SIGTERM");
      await run.exited;
      expect(said.join("\n")).toContain(
        `uses the cache dir ${hostCache} and this run ${report.config.paths.cache_dir}`,
      );
    } finally {
      await s.close();
      await call;
    }
  }, 90_000);

  test("a server given another gateway and model by its host (a plugin's options): the shell's dl status names both values", async () => {
    const h = home(`DELEGATE_LOCAL_URL=${fake.anthropicUrl}\nDELEGATE_LOCAL_MODEL=qwen-3-8-max\n`);
    const hostUrl = `${fake.url}/v1/chat/completions`;
    const s = await connectDl({ ...h.env, DELEGATE_LOCAL_URL: hostUrl, DELEGATE_LOCAL_MODEL: "host-model" });
    try {
      const report = JSON.parse((await runDl(["status", "--json"], h.env)).stdout);
      const pid = s.transport.pid;
      expect(report.settings.other_servers).toEqual([
        { server_pid: pid, variable: "DELEGATE_LOCAL_URL", server_value: hostUrl, this_value: fake.anthropicUrl },
        { server_pid: pid, variable: "DELEGATE_LOCAL_MODEL", server_value: "host-model", this_value: "qwen-3-8-max" },
      ]);
      const text = (await runDl(["status"], h.env)).stdout;
      expect(text).toContain(
        `note: dl serve pid ${pid} runs with DELEGATE_LOCAL_MODEL=host-model (here: qwen-3-8-max), set by its host`,
      );
      // The same server seen from a process with the same settings: nothing to say.
      const same = JSON.parse(
        (
          await runDl(["status", "--json"], {
            ...h.env,
            DELEGATE_LOCAL_URL: hostUrl,
            DELEGATE_LOCAL_MODEL: "host-model",
          })
        ).stdout,
      );
      expect(same.settings.other_servers).toEqual([]);
    } finally {
      await s.close();
    }
  }, 90_000);

  test("with the cache dir in the file instead, the server and the shell share one set of pools", async () => {
    const cache = tempDir("file-cache");
    const agents = tempDir("settings-agents");
    writeFileSync(join(agents, "helper.md"), "---\nname: helper\n---\nHelp.\n");
    const h = home(`DELEGATE_CACHE_DIR=${cache}\nDELEGATE_LOCAL_AGENTS_DIR=${agents}\n`);
    fake.reset();
    fake.always(reply.hang());
    const s = await connectDl({ ...h.env, DELEGATE_LOCAL_URL: fake.anthropicUrl });
    const call = s.client
      .callTool(
        {
          name: "delegate_to_local_agent",
          arguments: { agent_name: "helper", task: "go", workdir: tempDir("w"), model: "qwen-3-8-max" },
        },
        { timeout: 60_000 },
      )
      .catch(() => undefined);
    try {
      await fake.waitFor(() => fake.inFlight("qwen-3-8-max") === 1, 30_000);
      const report = JSON.parse((await runDl(["status", "--json"], h.env)).stdout);
      expect(report.other_cache_dirs).toEqual([]);
      expect(report.pools.find((p: { bucket: string }) => p.bucket === "qwen-3-8-max").in_use).toBe(1);
      expect(report.settings.sources.DELEGATE_CACHE_DIR).toBe("file");
    } finally {
      await s.close();
      await call;
    }
  }, 90_000);
});

const NOBODY = 65534;
const asNobody = process.getuid?.() === 0 && Bun.which("setpriv") !== null;

/** dl status as nobody (a copy of dl it may run, in /var/tmp: the suite's root is closed to other users). */
function statusAsNobody(base: string, env: Record<string, string>) {
  const r = Bun.spawnSync(
    ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--", join(base, "dl"), "status"],
    {
      env: { PATH: "/usr/bin:/bin", DELEGATE_TEST_ISOLATION: "1", DELEGATE_TEST_ISOLATION_ROOT: base, ...env },
      cwd: base,
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  return { code: r.exitCode, stderr: r.stderr.toString() };
}

describe.skipIf(!asNobody)("a settings file this user cannot reach (as nobody, through setpriv)", () => {
  let base: string;
  beforeAll(() => {
    base = mkdtempSync("/var/tmp/dl-settings-");
    chmodSync(base, 0o755);
    copyFileSync(requireBinary(), join(base, "dl"));
    chmodSync(join(base, "dl"), 0o755);
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const own = (dir: string) => {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chownSync(dir, NOBODY, NOBODY);
    return dir;
  };
  /** Every place dl keeps state, in the test's folder (a HOME of root's holds none of nobody's). */
  const elsewhere = (): Record<string, string> => ({
    XDG_CACHE_HOME: own(join(base, "cache")),
    DELEGATE_CACHE_DIR: own(join(base, "dl-cache")),
    CODEX_HOME: own(join(base, "codex")),
    ...Object.fromEntries(
      ["CODEX", "GEMINI", "DSH", "AGENT"].map((p) => [
        `DELEGATE_${p}_STATE_DIR`,
        own(join(base, `${p.toLowerCase()}-state`)),
      ]),
    ),
  });

  test("in its own HOME, behind a ~/.config root took over: refused in one line naming the folder and the fix", () => {
    const home = own(join(base, "home"));
    mkdirSync(join(home, ".config/dl"), { recursive: true, mode: 0o700 });
    writeFileSync(join(home, ".config/dl/settings.env"), "DELEGATE_LOCAL_MODEL=m\n", { mode: 0o600 });
    chmodSync(join(home, ".config"), 0o700); // root's, as a `sudo dl init` leaves it
    const r = statusAsNobody(base, { HOME: home, ...elsewhere() });
    expect(r.code).toBe(2);
    const line =
      r.stderr
        .trim()
        .split("\n")
        .find((l) => l.includes("settings file")) ?? r.stderr;
    expect(line).toContain(`${home}/.config/dl/settings.env`);
    expect(line).toContain(`is behind ${home}/.config (owner uid 0, mode 0700)`);
    expect(line).toContain(`sudo chown -R ${NOBODY} ${home}/.config`);
  });

  test("in a HOME that is not its own (root's): no settings file of this user's, and dl runs", () => {
    const r = statusAsNobody(base, { HOME: "/root", ...elsewhere() });
    expect(r.stderr).not.toContain("settings file");
    expect(r.code).not.toBe(2);
  });
});
