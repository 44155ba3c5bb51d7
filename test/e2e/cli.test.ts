import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { selfOwner } from "../../src/jobs/engine/machine.ts";
import { PROVIDERS } from "../../src/providers.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { SlotPool } from "../../src/sys/slots.ts";
import { requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { hasStoreOpen } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";

/**
 * The command line as a user meets it, through dist/dl: every mistyped flag, missing
 * value or missing argument is refused with exit 2 before anything happens, help is
 * readable in a pipe, Ctrl-C is exit 130, and `dl status` is a health check that leaves
 * no trace.
 */

/** Every file and dir under `dir`, relative. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

function oneLine(stderr: string): string {
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

/** A job store holding one `running` job whose server is long gone. */
function orphanStore(): { stateDir: string; status: () => string | undefined } {
  const stateDir = join(tempDir("cli-reap"), "codex");
  const store = JobStore.open(stateDir);
  store.insertMany([
    {
      id: "cx-orphan0001",
      provider: "codex",
      project: "/p",
      workdir: "/p",
      workspace_root: "/p",
      task: "t",
      created_at: Date.now() - 60_000,
      status: "running",
      owner_pid: 2 ** 22 - 7,
      owner_start: "1",
      server_id: "srv-gone",
    },
  ]);
  store.close();
  return {
    stateDir,
    status: () => {
      const s = JobStore.open(stateDir);
      try {
        return s.get("cx-orphan0001")?.status;
      } finally {
        s.close();
      }
    },
  };
}

describe("strict parsing", () => {
  test("dl reap --dryrun exits 2, suggests --dry-run and reaps nothing", async () => {
    const o = orphanStore();
    const typo = await runDl(["reap", "--dryrun"], { DELEGATE_CODEX_STATE_DIR: o.stateDir });
    expect(typo.code).toBe(2);
    expect(oneLine(typo.stderr)).toContain("unknown flag --dryrun; did you mean --dry-run?");
    expect(typo.stdout).toBe("");
    expect(o.status()).toBe("running");
    const dry = await runDl(["reap", "--dry-run"], { DELEGATE_CODEX_STATE_DIR: o.stateDir });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("codex: would end 1 job(s)");
    expect(o.status()).toBe("running");
  });

  test("dl wait --timout 1 x exits 2 at once instead of waiting for job x", async () => {
    const t0 = performance.now();
    const r = await runDl(["wait", "--timout", "1", "x"]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toContain("unknown flag --timout; did you mean --timeout?");
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  test("dl run: a flag without its value, no arguments, one argument, one too many", async () => {
    const noValue = await runDl(["run", "helper", "task", "--workdir"]);
    expect(noValue.code).toBe(2);
    expect(oneLine(noValue.stderr)).toContain("--workdir needs a value");
    const flagAsValue = await runDl(["run", "helper", "task", "--workdir", "--json"]);
    expect(flagAsValue.code).toBe(2);
    expect(flagAsValue.stderr).toContain("--workdir needs a value");
    const none = await runDl(["run"]);
    expect(none.code).toBe(2);
    expect(oneLine(none.stderr)).toContain("missing AGENT");
    const one = await runDl(["run", "helper"]);
    expect(one.code).toBe(2);
    expect(one.stderr).toContain("missing TASK");
    const extra = await runDl(["run", "helper", "task", "stray"]);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('unexpected argument "stray"');
  });

  test("a misspelt command suggests the right one; flags take no stray values", async () => {
    const r = await runDl(["stauts"]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toContain('unknown command "stauts"; did you mean status?');
    const bool = await runDl(["status", "--json=yes"]);
    expect(bool.code).toBe(2);
    expect(bool.stderr).toContain("--json takes no value");
    const wild = await runDl(["frobnicate"]);
    expect(wild.code).toBe(2);
    expect(wild.stderr).not.toContain("did you mean");
  });
});

describe("help and version", () => {
  test("dl help, dl help CMD and CMD --help show usage and an example; -V prints the version", async () => {
    const main = await runDl(["help"]);
    expect(main.code).toBe(0);
    for (const cmd of ["serve", "status", "run", "wait", "reap"]) expect(main.stdout).toContain(`  ${cmd}`);
    for (const cmd of ["serve", "status", "run", "wait", "reap"]) {
      const h = await runDl(["help", cmd]);
      expect(h.code).toBe(0);
      expect(h.stdout).toContain(`Usage: dl ${cmd}`);
      expect(h.stdout).toMatch(new RegExp(`Examples:\\n {2}\\$ dl ${cmd}|Examples:\\n {2}\\$ claude`));
      expect((await runDl([cmd, "--help"])).stdout).toBe(h.stdout);
    }
    const v = await runDl(["-V"]);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^dl \d+\.\d+\.\d+\S* \(commit \S+, [a-z0-9-]+\)\n$/);
    const unknown = await runDl(["help", "stauts"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("did you mean status?");
  });

  test("help is plain in a pipe, coloured with FORCE_COLOR, plain again with NO_COLOR", async () => {
    const ESC = "\u001b[";
    const piped = await runDl(["help", "run"], { FORCE_COLOR: undefined, NO_COLOR: undefined });
    expect(piped.stdout).not.toContain(ESC);
    const forced = await runDl(["help", "run"], { FORCE_COLOR: "1", NO_COLOR: undefined });
    expect(forced.stdout).toContain(ESC);
    const off = await runDl(["help", "run"], { FORCE_COLOR: "1", NO_COLOR: "1" });
    expect(off.stdout).not.toContain(ESC);
  });
});

/** A gateway whose /v1/models lists `models`. */
function modelsGateway(models: string[]) {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === "/v1/models"
        ? Response.json({ data: models.map((id) => ({ id })) })
        : new Response("not found", { status: 404 }),
  });
}

describe("dl status is read-only", () => {
  const gw = modelsGateway(["local-qwen-3-6-35b", "deepseek-v4-flash"]);
  afterAll(() => gw.stop(true));
  const url = `http://127.0.0.1:${gw.port}/v1/messages`;

  /** HOME and every default dir point into `home`; nothing else is overridden. */
  function homeEnv(home: string) {
    return {
      HOME: home,
      XDG_CACHE_HOME: undefined,
      XDG_CONFIG_HOME: undefined,
      XDG_STATE_HOME: undefined,
      XDG_DATA_HOME: undefined,
      CODEX_HOME: undefined,
      DELEGATE_LOCAL_URL: url,
    };
  }

  test("in an empty HOME it creates no file and reports the state dirs as not created yet", async () => {
    const home = tempDir("empty-home");
    const r = await runDl(["status"], homeEnv(home));
    expect(r.code).toBe(0);
    expect(tree(home)).toEqual([]);
    expect(r.stdout).toContain("not created yet");
    const json = await runDl(["status", "--json"], homeEnv(home));
    expect(tree(home)).toEqual([]);
    const report = JSON.parse(json.stdout) as { state_dirs: { exists: boolean; writable: boolean }[] };
    expect(report.state_dirs.every((d) => !d.exists && d.writable)).toBe(true);
    const watch = await runDl(["status", "--watch"], homeEnv(home));
    expect(watch.code).toBe(0);
    expect(tree(home)).toEqual([]);
  });

  test("a HOME that does not exist is not created", async () => {
    const parent = tempDir("no-home");
    const r = await runDl(["status"], homeEnv(join(parent, "missing")));
    expect(r.code).toBe(0);
    expect(tree(parent)).toEqual([]);
  });

  test("a default or coding model the gateway does not serve is a failed check naming it and the served ones", async () => {
    const r = await runDl(["status", "--json"], {
      DELEGATE_LOCAL_URL: url,
      DELEGATE_LOCAL_MODEL: "local-qwen-3-6-35b",
      DELEGATE_LOCAL_CODING_MODEL: "glm-9-coder",
    });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      healthy: boolean;
      failed_checks: string[];
      models: { role: string; model: string; served: boolean | null }[];
    };
    expect(report.healthy).toBe(false);
    expect(report.models).toEqual([
      { role: "default", variable: "DELEGATE_LOCAL_MODEL", model: "local-qwen-3-6-35b", served: true },
      { role: "coding", variable: "DELEGATE_LOCAL_CODING_MODEL", model: "glm-9-coder", served: false },
    ] as never);
    const check = report.failed_checks.find((c) => c.includes("glm-9-coder"));
    expect(check).toContain("DELEGATE_LOCAL_CODING_MODEL");
    expect(check).toContain("it serves: deepseek-v4-flash, local-qwen-3-6-35b");
    const text = await runDl(["status"], { DELEGATE_LOCAL_URL: url, DELEGATE_LOCAL_MODEL: "nope-model" });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("default model nope-model (DELEGATE_LOCAL_MODEL) is not served");
  });

  test("--json uses snake_case keys only", async () => {
    const r = await runDl(["status", "--json"], { DELEGATE_LOCAL_URL: url });
    const camel: string[] = [];
    const walk = (v: unknown, path: string) => {
      if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${path}[${i}]`);
      else if (v && typeof v === "object")
        for (const [k, x] of Object.entries(v)) {
          if (/[a-z][A-Z]/.test(k)) camel.push(`${path}.${k}`);
          walk(x, `${path}.${k}`);
        }
    };
    walk(JSON.parse(r.stdout), "");
    expect(camel).toEqual([]);
    expect(
      (JSON.parse(r.stdout) as { config: { backend: { coding_model: string } } }).config.backend.coding_model,
    ).toBe("local-qwen-3-6-35b");
  });
});

describe("Ctrl-C", () => {
  test.skipIf(process.platform !== "linux")("dl wait interrupted by SIGINT exits 130", async () => {
    const o = orphanStore();
    const p = Bun.spawn([requireBinary(), "wait", "cx-0e0e0e0e0e"], {
      env: testEnv({ DELEGATE_CODEX_STATE_DIR: o.stateDir }),
      stdout: "pipe",
      stderr: "pipe",
    });
    await until(() => hasStoreOpen(p.pid, o.stateDir), "dl wait to open the store");
    p.kill("SIGINT");
    expect(await p.exited).toBe(130);
  });
});

describe("dl serve --check", () => {
  test("prints each start-up check and exits 0 when the server would start", async () => {
    const home = tempDir("check-home");
    const r = await runDl(["serve", "--check"], {
      DELEGATE_LOCAL_URL: "http://127.0.0.1:9/v1/messages",
      HOME: home,
      XDG_CACHE_HOME: undefined,
      XDG_CONFIG_HOME: undefined,
      CODEX_HOME: undefined,
      DELEGATE_TOOLS: undefined,
    });
    expect(r.code).toBe(0);
    // Checking creates nothing, not even the state dirs it checks.
    expect(tree(home)).toEqual([]);
    expect(r.stdout).toMatch(/^ok +configuration parsed/m);
    expect(r.stdout).toMatch(/^ok +the server starts and answers initialize and tools\/list \(\d+ tools\)/m);
    expect(r.stdout).toMatch(/^WARN gateway litellm/m);
    // Which backends' tools are listed, and why the others are not.
    expect(r.stdout).toMatch(/^ok +agent tools listed/m);
    expect(r.stdout).toMatch(/^ok +gemini tools not listed: DELEGATE_GEMINI_ALLOW_DANGER is not 1/m);
    expect(r.stdout).toContain("dl serve would start");
  });

  test("an unusable state dir is a FAIL line and exit 1; a bad setting is exit 2", async () => {
    const blocker = join(tempDir("check"), "file");
    writeFileSync(blocker, "not a dir");
    const r = await runDl(["serve", "--check"], { DELEGATE_CODEX_STATE_DIR: join(blocker, "codex") });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL state dir codex jobs/m);
    expect(r.stdout).toContain("dl serve would not work");
    const bad = await runDl(["serve", "--check"], { DELEGATE_GATEWAY: "nope" });
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toContain("DELEGATE_GATEWAY");
  });

  test("every provider's state dir is checked, the agent's too (it once was not)", async () => {
    const blocker = join(tempDir("check-all"), "file");
    writeFileSync(blocker, "not a dir");
    const env = Object.fromEntries(PROVIDERS.map((p) => [p.stateEnv, join(blocker, p.name)]));
    const r = await runDl(["serve", "--check"], env);
    expect(r.code).toBe(1);
    for (const p of PROVIDERS) expect(r.stdout).toMatch(new RegExp(`^FAIL state dir ${p.name} jobs`, "m"));
  });
});

describe("dl status --watch", () => {
  function runningJob(): string {
    const stateDir = join(tempDir("watch"), "codex");
    mkdirSync(stateDir, { recursive: true });
    const store = JobStore.open(stateDir);
    store.insertMany([
      {
        id: "cx-watchme0001",
        provider: "codex",
        project: "/p",
        workdir: "/p/wt-a",
        workspace_root: "/p/wt-a",
        task: "t",
        created_at: Date.now() - 5_000,
        status: "queued",
        owner_pid: process.pid,
        owner_start: selfOwner().startTime,
        server_id: "srv-test",
      },
    ]);
    store.close();
    return stateDir;
  }

  /** An agent job of a live server whose child waits for a slot of the local- pool, as dl run says it does. */
  function waitingAgentJob(): string {
    const stateDir = join(tempDir("watch"), "agent");
    const store = JobStore.open(stateDir);
    const t = Date.now();
    const me = selfOwner();
    const base = { provider: "agent", project: "/p", workdir: "/p", workspace_root: "/p", task: "t", created_at: t };
    store.insertMany([
      {
        ...base,
        id: "ag-0000000a11",
        status: "running",
        owner_pid: me.pid,
        owner_start: me.startTime,
        params: '{"agent_name":"reviewer"}',
      },
    ]);
    store.update("ag-0000000a11", { started_at: t - 3000 });
    store.close();
    const msg = "waiting for a slot for local-qwen-3-6-35b: all 2 slots of pool local- are busy — 3 s of up to 120 s";
    mkdirSync(join(stateDir, "jobs", "ag-0000000a11"), { recursive: true });
    writeFileSync(
      join(stateDir, "jobs", "ag-0000000a11", "progress.json"),
      JSON.stringify({ turn: 0, max_turns: 10, message: msg, at: t }),
    );
    return stateDir;
  }

  test("a job waiting for a pool slot reads waiting, with the holder's agent, model and age", async () => {
    const cache = tempDir("watch-cache");
    using _slot = new SlotPool({ dir: join(cache, "slots", "local-"), size: 2 }).tryAcquire({
      label: "local-qwen-3-6-35b",
      model: "local-qwen-3-6-35b",
      task: "helper",
    });
    const r = await runDl(["status", "--watch"], {
      DELEGATE_AGENT_STATE_DIR: waitingAgentJob(),
      DELEGATE_CACHE_DIR: cache,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ag-0000000a11 +waiting \d+s \(waiting for a slot of pool local-\) +agent reviewer/);
    expect(r.stdout).toMatch(/behind agent helper, model local-qwen-3-6-35b for \d+s \(pid \d+\)/);
    expect(r.stdout).not.toMatch(/ag-0000000a11 +running/);
  });

  test("without a terminal it prints one snapshot with pools and holders, jobs and the Codex account", async () => {
    // This test process holds a slot of the local- pool, as a delegation would.
    const cache = tempDir("watch-cache");
    const taken = Date.now();
    using _slot = new SlotPool({ dir: join(cache, "slots", "local-"), size: 2 }).tryAcquire({
      label: "local-qwen-3-6-35b",
      model: "local-qwen-3-6-35b",
      task: "helper",
    });
    const r = await runDl(["status", "--watch"], { DELEGATE_CODEX_STATE_DIR: runningJob(), DELEGATE_CACHE_DIR: cache });
    const since = Math.ceil((Date.now() - taken) / 1000);
    expect(r.code).toBe(0);
    expect(r.stdout.match(/dl status --watch —/g)).toHaveLength(1);
    expect(r.stdout).toMatch(/local- +1\/2 in use/);
    // The holder's age is whole seconds since the slot was taken: no more than this test saw pass.
    const held = new RegExp(`agent helper, model local-qwen-3-6-35b for (\\d+)s \\(pid ${process.pid}\\)`).exec(
      r.stdout,
    );
    expect(Number(held?.[1])).toBeLessThanOrEqual(since);
    expect(r.stdout).toMatch(/cx-watchme0001 +queued \d+s/);
    expect(r.stdout).toContain("account: ok");
  });

  test.skipIf(!Bun.which("script"))("in a terminal it redraws every second until Ctrl-C, then exits 130", async () => {
    const stateDir = runningJob();
    // script(1) gives dl a pseudo-terminal; Ctrl-C typed into it reaches dl as SIGINT.
    const p = Bun.spawn(["script", "-qefc", `${requireBinary()} status --watch`, "/dev/null"], {
      env: testEnv({ DELEGATE_CODEX_STATE_DIR: stateDir, TERM: "xterm" }),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const reader = (async () => {
      for await (const chunk of p.stdout) out += new TextDecoder().decode(chunk);
    })();
    const frames = () => out.split("\u001b[H\u001b[2J").slice(1);
    await until(() => frames().length >= 2, "two frames of dl status --watch");
    const [first, second] = frames();
    for (const f of [first!, second!]) {
      expect(f).toContain("dl status --watch —");
      expect(f).toContain("local-  ");
      expect(f).toMatch(/cx-watchme0001 +queued \d+s/);
      expect(f).toContain("account: ok");
    }
    expect(out).toContain("\u001b[?1049h");
    p.stdin.write("\u0003");
    p.stdin.flush();
    expect(await p.exited).toBe(130);
    await reader;
    // The terminal is given back: alternate screen left, cursor shown.
    expect(out).toContain("\u001b[?25h\u001b[?1049l");
  });
});
