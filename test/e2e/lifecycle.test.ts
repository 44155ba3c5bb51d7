import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { lineReader } from "../helpers/lines.ts";
import { killPid, liveWith } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";

/**
 * How `dl serve` ends, driven through the compiled binary: every way a server is told to
 * stop (stdin closed, SIGTERM, SIGHUP) must take the commands its agents started along,
 * even ones that ignore SIGTERM; and no process of the same user may read the secrets in
 * the server's environment.
 */

const KEY = "sk-lifecycle-secret-key";

type Server = {
  proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  send(msg: object): void;
  next(id: number): Promise<unknown>;
};

/** dl serve spoken to in raw JSON-RPC lines, so the test owns its stdin and its pid. */
function startServer(cmd: string[], env: Record<string, string>, cwd?: string): Server {
  const proc = Bun.spawn(cmd, { env, cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const answers = new Map<number, unknown>();
  const read = lineReader(proc.stdout);
  void (async () => {
    for (let line = await read(); line !== null; line = await read()) {
      if (!line.trim()) continue;
      const msg = JSON.parse(line) as { id?: number };
      if (typeof msg.id === "number") answers.set(msg.id, msg);
    }
  })();
  return {
    proc,
    send(msg) {
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...msg })}\n`);
      proc.stdin.flush();
    },
    async next(id) {
      await until(() => answers.has(id) || proc.exitCode !== null, `JSON-RPC answer ${id}`);
      if (!answers.has(id))
        throw new Error(
          `server exited (${proc.exitCode}) before answering ${id}: ${await new Response(proc.stderr).text()}`,
        );
      return answers.get(id);
    },
  };
}

async function initialize(s: Server): Promise<void> {
  s.send({
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "lifecycle-test", version: "1" } },
  });
  await s.next(1);
  s.send({ method: "notifications/initialized" });
}

/** A pid a command wrote, once the whole line is there (the file exists before it is written). */
function readPid(path: string): number {
  const text = readFileSync(path, "utf8");
  const pid = Number(text.trim());
  if (!text.endsWith("\n") || !Number.isInteger(pid) || pid <= 1)
    throw new Error(`no complete pid in ${path}: ${JSON.stringify(text)}`);
  return pid;
}

const hasPid = (path: string): boolean => existsSync(path) && readFileSync(path, "utf8").endsWith("\n");

describe("dl serve stops the commands its agents started", () => {
  let fake: FakeModel;
  let agentsDir: string;

  beforeAll(async () => {
    requireBinary();
    fake = await startFakeModel({ apiKey: KEY });
    agentsDir = tempDir("agents");
    writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nYou help.\n");
  });
  afterAll(async () => {
    await fake?.stop();
  });

  const ways: [string, (s: Server) => void][] = [
    ["stdin closes", (s) => void s.proc.stdin.end()],
    ["SIGTERM", (s) => s.proc.kill("SIGTERM")],
    ["SIGHUP", (s) => s.proc.kill("SIGHUP")],
  ];
  for (const [why, stop] of ways) {
    // Each server waits out the same SIGTERM grace: run the three side by side.
    test.concurrent(`${why}: the server exits and a run_bash group that ignores SIGTERM is gone`, async () => {
      const dir = tempDir("proj");
      const model = `lifecycle-${why.replace(/\W/g, "")}`;
      // The shell and a background child both ignore SIGTERM: only SIGKILL ends them. They
      // are found by a marker in their argv (as root they see their own pid namespace).
      const m = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
      const command = `: ${m}; trap '' TERM; sleep 300.${m} & echo $! > ${join(dir, "child.pid")}; echo $$ > ${join(dir, "shell.pid")}; wait`;
      fake.script(model, reply.tool("run_bash", { command }), reply.text("done"));
      const s = startServer(
        [requireBinary(), "serve"],
        testEnv({
          DELEGATE_LOCAL_URL: fake.anthropicUrl,
          DELEGATE_LOCAL_KEY: KEY,
          DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
          DELEGATE_LOCAL_MODEL: model,
        }),
      );
      try {
        await initialize(s);
        s.send({
          id: 2,
          method: "tools/call",
          params: {
            name: "delegate_to_local_agent",
            arguments: { agent_name: "helper", task: "run it", workdir: dir },
          },
        });
        await until(
          () => hasPid(join(dir, "child.pid")) && hasPid(join(dir, "shell.pid")),
          "the command to write its pids",
        );
        const shell = () => liveWith(`: ${m};`).length > 0;
        const child = () => liveWith(`300.${m}`).length > 0;
        expect(readPid(join(dir, "shell.pid")) > 1 && readPid(join(dir, "child.pid")) > 1).toBe(true);
        expect(shell() && child()).toBe(true);

        const t0 = performance.now();
        stop(s);
        const code = await Promise.race([s.proc.exited, Bun.sleep(15_000).then(() => "still running")]);
        const exitMs = Math.round(performance.now() - t0);
        expect(code).toBe(0);
        // The server waited for them: both are gone by the time it has exited.
        expect({ shell: shell(), child: child() }).toEqual({ shell: false, child: false });
        console.log(`${why}: server exited ${code} after ${exitMs} ms; the shell and its child gone`);
      } finally {
        if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
        // Only what the test failed to see gone, found by its marker.
        for (const pid of liveWith(m)) killPid(pid);
      }
    });
  }
});

const NOBODY = 65534;
const setpriv = Bun.which("setpriv");
const asNobody = (cmd: string[]) => [
  setpriv ?? "setpriv",
  `--reuid=${NOBODY}`,
  `--regid=${NOBODY}`,
  "--clear-groups",
  ...cmd,
];
const isRoot = process.getuid?.() === 0;

describe("no process of the same user can read the server's secrets", () => {
  let home: string;
  beforeAll(() => {
    // The suite's root is private to the test runner's uid, and /tmp may be too (0700 on
    // some machines): this user gets a tree of its own it can reach, as a real user's HOME is.
    home = tempDir("dl-harden", "/var/tmp");
    for (const d of ["home", "proj"]) mkdirSync(join(home, d));
    for (const d of [home, join(home, "home"), join(home, "proj")]) chownSync(d, NOBODY, NOBODY);
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  const env = () =>
    testEnv({
      HOME: join(home, "home"),
      XDG_CACHE_HOME: join(home, "home", ".cache"),
      XDG_CONFIG_HOME: join(home, "home", ".config"),
      XDG_STATE_HOME: join(home, "home", ".local", "state"),
      XDG_DATA_HOME: join(home, "home", ".local", "share"),
      CODEX_HOME: join(home, "home", ".codex"),
      DELEGATE_TEST_ISOLATION_ROOT: home,
      DL_TEST_ROOT: home,
      DELEGATE_LOCAL_URL: "http://127.0.0.1:9/v1/messages",
      DELEGATE_LOCAL_KEY: KEY,
    });
  const readEnviron = (pid: number) =>
    Bun.spawnSync(asNobody(["cat", `/proc/${pid}/environ`]), { env: testEnv(), stdout: "pipe", stderr: "pipe" });

  test.skipIf(!setpriv || !isRoot || process.platform !== "linux")(
    "an unprivileged dl serve's /proc/<pid>/environ is closed to its own uid (setpriv to nobody; needs root and util-linux)",
    async () => {
      // Control: the same uid reads an ordinary process's environ (the probe itself works).
      const plain = Bun.spawn(asNobody(["sleep", "30"]), { env: env(), cwd: join(home, "proj"), stdin: "ignore" });
      const s = startServer(asNobody([requireBinary(), "serve"]), env(), join(home, "proj"));
      try {
        await until(
          () =>
            existsSync(`/proc/${plain.pid}/environ`) &&
            readFileSync(`/proc/${plain.pid}/status`, "utf8").includes(`Uid:\t${NOBODY}`),
          "the control process",
        );
        // setpriv execs into sleep; wait until it has, so the environ read is sleep's.
        await until(() => readFileSync(`/proc/${plain.pid}/comm`, "utf8").trim() === "sleep", "setpriv to exec sleep");
        const control = readEnviron(plain.pid);
        expect(control.exitCode).toBe(0);
        expect(control.stdout.toString()).toContain(KEY);

        await initialize(s); // answering means started, and hardened before reading config
        expect(readFileSync(`/proc/${s.proc.pid}/status`, "utf8")).toContain(`Uid:\t${NOBODY}\t${NOBODY}`);
        const probe = readEnviron(s.proc.pid);
        const err = probe.stderr.toString();
        console.log(
          `as uid ${NOBODY}: cat /proc/<sleep>/environ exit ${control.exitCode}; cat /proc/<dl serve>/environ exit ${probe.exitCode}: ${err.trim()}`,
        );
        expect(probe.exitCode).not.toBe(0);
        expect(err).toContain("Permission denied");
        expect(probe.stdout.toString()).not.toContain(KEY);
        // What other dl processes need to tell a live server from a dead one stays open.
        const ident = Bun.spawnSync(asNobody(["cat", `/proc/${s.proc.pid}/stat`, `/proc/${s.proc.pid}/cmdline`]), {
          env: testEnv(),
          stdout: "pipe",
          stderr: "pipe",
        });
        expect(ident.exitCode).toBe(0);
        expect(ident.stdout.toString()).toContain("serve");
      } finally {
        plain.kill("SIGKILL");
        s.proc.stdin.end();
        await Promise.race([s.proc.exited, Bun.sleep(5_000)]);
        if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
      }
    },
  );
});
