import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { CODEX_NPM_BIN, makeCodexHome } from "../helpers/codex-home.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";
import { argvOf, filesUnder } from "./channel-files.ts";

/**
 * The channels of issue 30 that exist only while jobs run, through dist/dl: jobs of all
 * four kinds are held mid-run (each fake waits for a release file) with dl's keys in its
 * environment, a workdir .env and the CLIs' output; while they run, every process's
 * environment (/proc/<pid>/environ of Codex, agy, the dsh launcher, run_bash's commands,
 * the agent job's `dl run`), every file under the state, cache and temporary dirs (slot
 * and pool locks, registries, progress files, Codex's TMPDIR and CODEX_HOME), the running
 * views (`dl jobs --json`, `dl status --json`, `dl show`, `dl logs`) and the followers
 * (`dl logs --follow`, `dl status --watch`) are searched, and after the release the
 * workdirs too (what a child wrote from its own environment).
 */
const MARK = `QL${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
const KEYS = {
  local: `lk-${MARK}-live-local-key`,
  token: `tk-${MARK}-live-service-token`,
  anthropic: `sk-ant-api03-${MARK}LiveAbCdEfGhIjKlMnOpQr-0123456789`,
  passed: `ps-${MARK}-live-dsh-passed`,
  codexPassed: `cx-${MARK}-live-codex-bearer`,
  dotenv: `de-${MARK}-live-dotenv-77`,
} as const;
/** Which keys each child may hold in its environment, because it is handed them on purpose. */
const MAY_HOLD: Record<string, readonly string[]> = {
  launcher: [KEYS.passed],
  codex: [KEYS.codexPassed],
  dl: [KEYS.local, KEYS.token, KEYS.passed, KEYS.codexPassed],
};

const ENV_FILE = `ANTHROPIC_API_KEY=${KEYS.anthropic}\nDB_PASSWORD=${KEYS.dotenv}\n`;

/** The dsh launcher: says what it read, writes its environment into the workdir, waits for the release file. */
const LAUNCHER = `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --out-dir) out="$2"; shift 2 ;; --cwd) cwd="$2"; shift 2 ;; *) shift 2 ;; esac; done
mkdir -p "$out"
env > "$cwd/launcher-env.txt"
cat "$cwd/.env"; cat "$cwd/.env" >&2; echo "passed=$DSH_GATEWAY_HANDLE"
echo "progress $(cat "$cwd/.env" | tr '\\n' ' ')" > "$out/progress.log"
while [ ! -e "$cwd/release" ]; do sleep 0.05; done
printf '{"status":"done","rc":0,"diff_stat":"","summary":"%s","tokens":{"input":1,"output":1},"wall_s":0.1}\\n' "$(tr '\\n"' '  ' < "$cwd/.env")" > "$out/result.json"
`;
/** agy: the same, in its jail. */
const AGY = `#!/bin/sh
env > agy-env.txt
echo "agy: read $(tr '\\n"' '  ' < .env)" >&2
while [ ! -e release ]; do sleep 0.05; done
printf '{"response":"agy read %s","session_id":"s-1","stats":{}}\\n' "$(tr '\\n"' '  ' < .env)"
`;

type Found = { channel: string; keys: string[] };

function keysIn(text: string, allowed: readonly string[] = []): string[] {
  return Object.entries(KEYS).flatMap(([name, v]) => (text.includes(v) && !allowed.includes(v) ? [name] : []));
}

const parentOf = (pid: string) => {
  try {
    return (
      readFileSync(`/proc/${pid}/stat`, "latin1")
        .replace(/^.*\) \S+ /, "")
        .split(" ")[0] ?? "0"
    );
  } catch {
    return "0";
  }
};

/** What a process is to dl: dl itself, the dsh launcher or the Codex CLI, or a child of one (which inherits what it was handed). */
function kindOf(pid: string): string {
  for (let p = pid, depth = 0; p !== "0" && p !== "1" && depth < 12; p = parentOf(p), depth++) {
    const argv = argvOf(p);
    if (argv.includes("launcher.sh")) return "launcher";
    if (/\/codex(\s|$)|codex-linux|@openai\/codex/.test(argv)) return "codex";
    if (/\/dl (run|serve|supervise)\b/.test(argv)) return depth === 0 ? "dl" : "";
  }
  return "";
}

/** What the environment search saw: each process's kind to dl and its argv. */
const kindsSeen = new Set<string>();

/** Every process of this run (its environment names the run's root), with what its environment holds that it may not. */
function environs(root: string): Found[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .flatMap((pid): Found[] => {
      let env: string;
      let argv: string;
      try {
        env = readFileSync(`/proc/${pid}/environ`, "latin1");
        argv = readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ");
      } catch {
        return [];
      }
      if (!env.includes(root) && !argv.includes(root)) return [];
      const kind = kindOf(pid);
      kindsSeen.add(`${kind}: ${argv}`);
      const keys = keysIn(env, MAY_HOLD[kind] ?? []);
      return keys.length ? [{ channel: `environ of ${pid} ${argv.slice(0, 160)}`, keys }] : [];
    });
}

let gateway: FakeModel;
let codex: FakeResponses;
let release: () => void;
const released = new Promise<void>((r) => {
  release = r;
});
beforeAll(async () => {
  gateway = await startFakeModel({ apiKey: KEYS.local });
  codex = startFakeResponses(() => ({ kind: "edit", file: "codex.txt", content: KEYS.anthropic, until: released }));
});
afterAll(async () => {
  release();
  await gateway?.stop();
  await codex?.stop();
});

function setUp(root: string): Record<string, string> {
  const agents = join(root, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(join(agents, "helper.md"), "---\nname: helper\n---\nHelp.\n");
  const launcher = join(root, "launcher.sh");
  writeFileSync(launcher, LAUNCHER);
  const agy = join(root, "agy-bin", "agy");
  mkdirSync(join(root, "agy-bin"), { recursive: true });
  writeFileSync(agy, AGY);
  for (const f of [launcher, agy]) chmodSync(f, 0o755);
  const modelsFile = join(root, "models.json");
  writeFileSync(modelsFile, JSON.stringify({ models: { "ds-flash": { model: "deepseek-v4-flash", enabled: true } } }));
  const home = join(root, "home");
  mkdirSync(join(root, "tmp"), { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {
    HOME: home,
    TMPDIR: join(root, "tmp"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_CONFIG_HOME: join(home, ".config"),
    DELEGATE_TEST_ISOLATION_ROOT: root,
    DELEGATE_LOCAL_KEY: KEYS.local,
    MY_SERVICE_TOKEN: KEYS.token,
    DSH_GATEWAY_HANDLE: KEYS.passed,
    DELEGATE_DSH_ENV_PASSTHROUGH: "DSH_GATEWAY_HANDLE",
    DELEGATE_LOCAL_URL: gateway.anthropicUrl,
    DELEGATE_LOCAL_MODEL: "live-model",
    DELEGATE_LOCAL_AGENTS_DIR: agents,
    DELEGATE_DSH_LAUNCHER: launcher,
    DELEGATE_DSH_MODELS_FILE: modelsFile,
    DELEGATE_AGY_BIN: agy,
    DELEGATE_GEMINI_ALLOW_DANGER: "1",
    DELEGATE_CODEX_STAGGER_S: "0",
    DELEGATE_DSH_STAGGER_S: "0",
    DELEGATE_CACHE_DIR: join(root, "cache"),
    DELEGATE_CODEX_ENV_PASSTHROUGH: "DL_FAKE_BEARER",
    DL_FAKE_BEARER: KEYS.codexPassed,
    DELEGATE_CODEX_BIN: CODEX_NPM_BIN,
    CODEX_HOME: makeCodexHome(join(home, ".codex"), codex.baseUrl, "DL_FAKE_BEARER"),
  };
  for (const p of ["codex", "gemini", "dsh", "agent"])
    env[`DELEGATE_${p.toUpperCase()}_STATE_DIR`] = join(root, `${p}-state`);
  return env;
}

async function dl(env: Record<string, string>, args: string[]): Promise<string> {
  const proc = Bun.spawn([requireBinary(), ...args], { env: testEnv(env), stdout: "pipe", stderr: "pipe" });
  const [o, e] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return `${o}\n${e}`;
}

/** A follower (`dl logs --follow`, `dl status --watch`) read until it ends or is stopped. */
function follow(env: Record<string, string>, args: string[]) {
  const proc = Bun.spawn([requireBinary(), ...args], { env: testEnv(env), stdout: "pipe", stderr: "pipe" });
  const text = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]).then((t) =>
    t.join("\n"),
  );
  return { proc, text };
}

function repo(root: string, name: string): string {
  const { repo } = makeRepo(root, name, 0);
  writeFileSync(join(repo, ".env"), ENV_FILE);
  return repo;
}

async function submitAll(s: TaskDl, root: string): Promise<{ ids: string[]; dirs: string[] }> {
  const dirs: string[] = [];
  const submit = async (name: string, task: Record<string, unknown>) => {
    dirs.push(task.workdir as string);
    const r = (await s.client.callTool({ name, arguments: { tasks: [task] } }, { timeout: 60_000 })) as {
      isError?: boolean;
      structuredContent?: { jobs: { id: string }[] };
    };
    expect({ name, error: r.isError ? r : null }).toEqual({ name, error: null });
    return r.structuredContent!.jobs[0]!.id;
  };
  gateway.script(
    reply.tool("run_bash", { command: "env > bash-env.txt; cat .env; while [ ! -e release ]; do sleep 0.05; done" }),
    async () => {
      await released;
      return reply.text(`done, I read ${KEYS.anthropic} and ${KEYS.dotenv}`);
    },
  );
  const ids = [
    await submit("submit_dsh", { task: `use ${KEYS.token}`, model: "ds-flash", workdir: repo(root, "dsh") }),
    await submit("submit_agent", { agent_name: "helper", task: "read .env", workdir: repo(root, "agent") }),
    await submit("submit_codex", { task: "write codex.txt", workdir: repo(root, "codex") }),
  ];
  if (!skipBwrap) ids.push(await submit("submit_gemini", { task: "read .env", workdir: repo(root, "gemini") }));
  return { ids, dirs };
}

/**
 * Every file dl makes under the state, cache, home and temporary dirs. While a job runs
 * its child's own out folder (a launcher's logs, in the 0700 job folder) is the child's
 * until the job ends, when it is scrubbed; the user's CODEX_HOME is the CLI's own state.
 */
function dlFiles(root: string, when: "live" | "ended"): [string, string][] {
  const searched = (p: string) => !p.includes("/home/.codex/") && !(when === "live" && /\/jobs\/[^/]+\/out\//.test(p));
  return ["codex-state", "gemini-state", "dsh-state", "agent-state", "cache", "tmp", "home"]
    .flatMap((d) => filesUnder(join(root, d), searched))
    .map(([p, t]): [string, string] => [`${when} ${p}`, t]);
}

describe("no key in a channel that exists while jobs run", () => {
  test("environments of every child, live views, followers, lock and registry files, TMPDIR, CODEX_HOME, workdir leftovers", async () => {
    const root = tempDir("dl-secret-live-");
    const env = setUp(root);
    const frames: string[] = [];
    const s = await connectTaskDl(env, { onFrame: (l) => frames.push(l), cwd: root });
    const found: Found[] = [];
    const outputs: [string, string][] = [];
    try {
      const { ids, dirs } = await submitAll(s, root);
      // Held mid-run: each child has written its environment dump and waits.
      await until(
        () =>
          dirs.every(
            (d) =>
              ["launcher-env.txt", "bash-env.txt", "agy-env.txt"].some((f) => existsSync(join(d, f))) ||
              d.endsWith("codex"),
          ),
        "every child to have dumped its environment",
        60_000,
      );
      await until(() => codex.inFlight() > 0, "Codex to ask its endpoint", 60_000);
      found.push(...environs(root));
      // The search saw every child it is about: the launcher, Codex, agy's jail, run_bash's shell.
      const saw = [...kindsSeen].join("\n");
      for (const re of [/^dl: \S+ supervise/m, /^launcher: /m, /^codex: /m, /^: \S*bash -c env > bash-env/m])
        expect(saw).toMatch(re);
      if (!skipBwrap) expect(saw).toMatch(/^: \S*sh \S+\/agy-bin\/agy/m);
      const followers = [follow(env, ["status", "--watch"]), ...ids.map((id) => follow(env, ["logs", id, "--follow"]))];
      for (const args of [
        ["jobs", "--json"],
        ["jobs"],
        ["status", "--json"],
        ...ids.flatMap((id) => [
          ["show", id, "--json"],
          ["logs", id],
        ]),
      ])
        outputs.push([`live dl ${args.join(" ")}`, await dl(env, args)]);
      outputs.push(...dlFiles(root, "live"));
      for (const d of dirs) writeFileSync(join(d, "release"), "");
      release();
      outputs.push(["dl wait", await dl(env, ["wait", ...ids, "--json"])]);
      followers[0]!.proc.kill();
      for (const f of followers) outputs.push([`follower ${f.proc.pid}`, await f.text]);
      outputs.push(...dlFiles(root, "ended"));
      // What each child wrote from its own environment into its workdir: none of dl's keys.
      const dumps = dirs.flatMap((d) => filesUnder(d).filter(([p]) => p.endsWith("-env.txt")));
      expect(dumps.map(([p]) => p.slice(root.length + 1).replace(/\/.*\//, "/")).sort()).toEqual(
        ["agent/bash-env.txt", "dsh/launcher-env.txt", ...(skipBwrap ? [] : ["gemini/agy-env.txt"])].sort(),
      );
      for (const [p, text] of dumps) {
        const keys = keysIn(text, p.endsWith("launcher-env.txt") ? MAY_HOLD.launcher : []);
        if (keys.length) found.push({ channel: p, keys });
      }
    } finally {
      await s.close();
    }
    outputs.push(["MCP frames", frames.join("\n")], ["dl serve stderr", s.io.stderr]);
    for (const [channel, text] of outputs) {
      const keys = keysIn(text);
      if (keys.length) found.push({ channel, keys });
    }
    console.log(`[live secret channels] ${found.length} channel(s) hold a key`);
    for (const f of found) console.log(`  ${f.channel}: ${f.keys.join(",")}`);
    expect(found).toEqual([]);
  }, 180_000);
});
