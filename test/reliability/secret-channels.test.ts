import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { CODEX_NPM_BIN, makeCodexHome } from "../helpers/codex-home.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { pidAlive } from "../helpers/proc.ts";
import { supervisorOf } from "../helpers/supervisor.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";
import { argvOf, filesUnder } from "./channel-files.ts";

/**
 * The channel search of issue 30, through dist/dl: a distinctive key in every place a key
 * can come from (dl's environment, a task, workdir files the agent, Codex, agy and the
 * dsh launcher read, a model's and a CLI's output on stdout and stderr, a file name, a
 * model name, a delegate_to_provider key learned at run time, a value handed to a CLI by
 * name), jobs of all four kinds, delegations and a follow-up; then every channel is
 * searched: every MCP frame (results, errors, notifications, task answers), the server's
 * stderr, every command's text and JSON (show, logs, jobs, usage, status, wait), and every
 * file under the state and cache dirs, SQLite files included. Run as root and, with
 * setpriv, as an ordinary user (nobody). Nothing may hold any key.
 */
/** Distinct per run: every process on the machine is searched, and another run of this file may be among them. */
const MARK = `QZ${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
const KEYS = {
  /** DELEGATE_LOCAL_KEY: shaped like nothing, known only because dl holds it. */
  local: `lk-${MARK}-local-gateway-key`,
  /** Given nowhere: only its shape gives it away. */
  anthropic: `sk-ant-api03-${MARK}AbCdEfGhIjKlMnOpQrStUv-0123456789`,
  /** MY_SERVICE_TOKEN in dl's environment: a secret by its name. */
  token: `tk-${MARK}-service-token`,
  /** Handed to the dsh launcher by name (a name that says nothing). */
  passed: `ps-${MARK}-dsh-passed-value`,
  /** delegate_to_provider's api_key: learned when the call arrives. */
  provider: `pv-${MARK}-provider-key`,
  /** A model name that is a pasted key. */
  model: `sk-${MARK}modelNameAbCdEf012345`,
  /** A file name in the workdir. */
  file: `ghp_${MARK}fileName0123456789abcdef`,
  /** DB_PASS in dl's environment: a short credential word, as a word of its own. */
  pass: `dp-${MARK}-db-pass-value`,
  /** github_pat, lower case. */
  pat: `pt-${MARK}-github-pat-value`,
  /** The query parameter of DELEGATE_LOCAL_URL (a gateway that takes its key in the URL). */
  urlQuery: `uq-${MARK}-url-query-key`,
  /** Handed to the Codex CLI by name; the fake endpoint says it back. */
  codexPassed: `cx-${MARK}-codex-passed-bearer`,
  /** DB_PASSWORD in a workdir .env only: dl learns it when it sees it named. */
  dotenv: `de-${MARK}-dotenv-only-99`,
} as const;

/** A key as text carries it without writing it: URL-encoded, base64 (a Basic header), base64url. */
const encodings = (k: string) => [
  encodeURIComponent(k),
  Buffer.from(k).toString("base64"),
  Buffer.from(`user:${k}`).toString("base64url"),
];
/** What is looked for: each key, and enough of each encoding that none of it may remain. */
const searched = (k: string) => [
  k,
  encodeURIComponent(k),
  Buffer.from(k).toString("base64").slice(4, -4),
  Buffer.from(`user:${k}`).toString("base64url").slice(12, -4),
];
/**
 * A key as a printer escapes it: every character a JSON `\u` escape (a LiteLLM/OpenAI 401
 * body saying back the key it got), every byte `%XX`, and broken over two lines (a
 * wrapped terminal, a chunk written as two lines).
 */
const jsonEscaped = (k: string) => [...k].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
const percentEscaped = (k: string) => [...Buffer.from(k)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
const splitOverLines = (k: string) => `${k.slice(0, k.length >> 1)}\n${k.slice(k.length >> 1)}`;
const escapings = (k: string) => [jsonEscaped(k), percentEscaped(k), splitOverLines(k)];
/**
 * `text` as a reader would read it: JSON escapes, `%XX` and line breaks undone, again for
 * text serialized twice (a JSON string inside JSON), so a key printed escaped is found.
 */
const ONE_LEVEL = /\\(?:u([0-9a-fA-F]{4})|(["\\/])|r\\n|[rn])|%([0-9a-fA-F]{2})|\r?\n/g;
function asRead(text: string): string {
  let t = text;
  for (let level = 0; level < 4; level++) {
    // One level at a time, left to right, as a JSON or URL reader would: `\\\\u006c` is `\\u006c` once read.
    const next = t.replace(ONE_LEVEL, (_, u?: string, ch?: string, pct?: string) =>
      u || pct ? String.fromCharCode(Number.parseInt((u ?? pct)!, 16)) : (ch ?? ""),
    );
    if (next === t) break;
    t = next;
  }
  return t;
}
/** Words of a task that are no key but no other user may read: never in a process's argv. */
const PRIVATE_TASK_WORDS = `private-plan-${MARK}`;
/**
 * Words only the Codex job's task holds: what is looked for in every argv while Codex
 * runs. (agy's task is its -p argument, a documented limit: a Gemini job running at the
 * same moment holds the shared words in its argv.)
 */
const CODEX_TASK_WORDS = `codex-plan-${MARK}`;

const LOCAL_MODEL = "local-secrets-model";
const ENV_FILE = [
  `DELEGATE_LOCAL_KEY=${KEYS.local}`,
  `ANTHROPIC_API_KEY=${KEYS.anthropic}`,
  `MY_SERVICE_TOKEN=${KEYS.token}`,
  `DB_PASSWORD=${KEYS.dotenv}`,
  "",
].join("\n");
/** The keys dl holds, bare and encoded. */
const HELD = [KEYS.local, KEYS.token, KEYS.passed, KEYS.pass, KEYS.pat, KEYS.urlQuery, KEYS.codexPassed];
/** What every fake model and CLI says back: each key bare, as a model repeating a file would, and encoded. */
const ECHO = `saw ${Object.values(KEYS)
  .filter((k) => k !== KEYS.dotenv && k !== KEYS.provider)
  .join(" / ")}.txt; encoded ${HELD.flatMap(encodings).join(" ")}; escaped ${HELD.flatMap(escapings).join(" ")}`;
/** What the CLIs print escaped (a file of the workdir): on one line, as inside a JSON answer, and over lines. */
const ESCAPED_ONE_LINE = HELD.flatMap((k) => [jsonEscaped(k), percentEscaped(k)]).join(" ");
const ESCAPED_LINES = `${ESCAPED_ONE_LINE}\n${HELD.map(splitOverLines).join("\n")}\n`;
/** A LiteLLM/OpenAI-style 401 body: the key it received said back, JSON-escaped, %-encoded and wrapped. */
const ECHOING_401 = `{"error":{"message":"Incorrect API key provided: ${HELD.map(jsonEscaped).join(", ")}","type":"invalid_request_error","received":"${HELD.map(percentEscaped).join(" ")}","wrapped":"${HELD.map(splitOverLines).join(" ").replaceAll("\n", "\\n")}"}}`;
/** What a model says once it has read the workdir's .env: the password it found there too, bare. */
const READ_BACK = `${ECHO}; the db password is ${KEYS.dotenv}`;
const TASK = `Use these: ${HELD.join(" ")} and ${KEYS.anthropic}; the file ${KEYS.file}.txt; ${PRIVATE_TASK_WORDS}`;
/** A delegate_to_provider task also names its own key. */
const PROVIDER_TASK = `${TASK}; and ${KEYS.provider}`;

/** The dsh launcher: prints the workdir's .env and listing and the passed value, and says it all in its result. */
const LAUNCHER = `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --out-dir) out="$2"; shift 2 ;; --cwd) cwd="$2"; shift 2 ;; *) shift 2 ;; esac; done
mkdir -p "$out"
cat "$cwd/.env"; ls "$cwd"; echo "passed=$DSH_GATEWAY_HANDLE"
echo "the password is $(sed -n 's/^DB_PASSWORD=//p' "$cwd/.env")"
cat "$cwd/.env" >&2; echo "stderr passed=$DSH_GATEWAY_HANDLE" >&2
cat "$cwd/escaped.txt"; cat "$cwd/escaped.txt" >&2
{ cat "$cwd/.env"; echo "$DSH_GATEWAY_HANDLE"; } > "$out/launcher.log"
summary=$(printf '%s' "$(cat "$cwd/.env") $DSH_GATEWAY_HANDLE $(ls "$cwd")" | tr '\\n"' '  ')
printf '{"status":"done","rc":0,"diff_stat":"","summary":"%s","tokens":{"input":1,"output":1},"wall_s":0.1}\\n' "$summary" > "$out/result.json"
`;

/** agy: answers with the .env it read and the workdir's listing, and complains on stderr with them. */
const AGY = `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -p|--prompt|--output-format|-m|--model) shift 2 ;; *) shift ;; esac; done
env_text=$(cat .env | tr '\\n"' '  ')
files=$(ls | tr '\\n' ' ')
echo "agy: read $env_text" >&2; cat escaped.txt >&2
printf '{"response":"agy read %s and %s; %s","session_id":"s-1","stats":{}}\\n' "$env_text" "$files" "$(head -n 1 escaped.txt)"
`;

type Ctx = {
  root: string;
  env: Record<string, string>;
  /** How dl is started: dist/dl, or setpriv and a copy of it another user may run. */
  command: string[];
  /** The uid that owns what the test makes for dl (a repository), when dl runs as another user. */
  owner?: number;
  gemini: boolean;
  codex: boolean;
};

/** Occurrences of every key in `text`, bare, encoded or escaped (also twice), by key. */
function occurrences(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  const read = asRead(text);
  for (const [name, value] of Object.entries(KEYS)) {
    const n = [...new Set(searched(value))].reduce((sum, form) => sum + text.split(form).length - 1, 0);
    const escaped = read === text ? 0 : read.split(value).length - text.split(value).length;
    if (n + Math.max(0, escaped)) out[name] = n + Math.max(0, escaped);
  }
  return out;
}

/** Every process's argv now (/proc/<pid>/cmdline, which every local user can read). */
function everyArgv(): string {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .map(argvOf)
    .join("\n");
}
/** argv of every process, taken whenever a fake endpoint answers (while dl's children run). */
const argvSeen: string[] = [];
/** The same while the Codex CLI was asking its endpoint. */
const codexArgvSeen: string[] = [];

/** `dir` and everything under it that is not 0700 (folders) or 0600 (files), with its mode. */
function openToOthers(dir: string): string[] {
  const entries = [dir, ...(readdirSync(dir, { recursive: true }) as string[]).map((n) => join(dir, n))];
  return entries.flatMap((p) => {
    const st = lstatSync(p);
    return !st.isSymbolicLink() && (st.mode & 0o077) !== 0 ? [`${p} ${(st.mode & 0o777).toString(8)}`] : [];
  });
}

async function dl(c: Ctx, args: string[]): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn([...c.command, ...args], {
    env: testEnv(c.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, out: `${stdout}\n${stderr}` };
}

/** The workdir every job and delegation works in: a repository with the .env and the key-named file. */
function attackRepo(c: Ctx, name: string): string {
  const { repo } = makeRepo(c.root, name, 0);
  writeFileSync(join(repo, ".env"), ENV_FILE);
  writeFileSync(join(repo, `${KEYS.file}.txt`), `model ${KEYS.model}\n`);
  writeFileSync(join(repo, "escaped.txt"), ESCAPED_LINES);
  if (c.owner !== undefined) chownTree(repo, c.owner);
  return repo;
}

type Found = { channel: string; keys: Record<string, number> };

/**
 * Runs the attack and returns every channel holding a key. `gateway` answers the agent
 * (reads .env, lists files, says everything back); `provider` is delegate_to_provider's
 * endpoint, which echoes its key.
 */
async function attack(c: Ctx, gateway: FakeModel, provider: FakeModel): Promise<Found[]> {
  argvSeen.length = 0;
  codexArgvSeen.length = 0;
  const frames: string[] = [];
  const s = await connectTaskDl(c.env, { onFrame: (l) => frames.push(l), command: c.command, cwd: c.root });
  const outputs: [string, string][] = [];
  try {
    const { jobs, logs } = await runEverything(c, s, gateway, provider, outputs);
    const waited = await dl(c, ["wait", ...jobs, "--json"]);
    outputs.push(["dl wait <ids> --json", waited.out]);
    expect(waited.code).toBe(0);
    for (const id of jobs)
      for (const args of [
        ["show", id],
        ["show", id, "--json"],
        ["logs", id],
        ["logs", id, "--json"],
      ])
        outputs.push([`dl ${args.join(" ")}`, (await dl(c, args)).out]);
    for (const id of logs) outputs.push([`dl logs ${id}`, (await dl(c, ["logs", id])).out]);
    const views = [["jobs"], ["jobs", "--json"], ["usage"], ["usage", "--json"], ["status"], ["status", "--json"]];
    const more = [
      ["status", "--watch"],
      ["serve", "--check"],
      ["logs", jobs[0]!, "--follow"],
      ["cancel", jobs[0]!],
    ];
    const init = ["init", "--json", "--endpoint", gateway.url, "--model", LOCAL_MODEL];
    for (const args of [...views, ...more, init, ["wait", "--all", "--json"], ["wait", ...jobs]])
      outputs.push([`dl ${args.join(" ")}`, (await dl(c, args)).out]);
    outputs.push(...(await fromTheShell(c, gateway)));
  } finally {
    await s.close();
  }
  outputs.push(["MCP frames", frames.join("\n")], ["dl serve stderr", s.io.stderr]);
  // argv is an output too: every local user reads /proc/<pid>/cmdline. A Codex task is
  // private besides (the CLI reads it on stdin), and was looked for while Codex ran.
  expect(argvSeen.length).toBeGreaterThan(0);
  outputs.push(["argv of every process while dl's children ran", [...argvSeen, ...codexArgvSeen].join("\n")]);
  if (c.codex) expect(codexArgvSeen.length).toBeGreaterThan(0);
  expect(codexArgvSeen.filter((a) => a.includes(CODEX_TASK_WORDS))).toEqual([]);
  const dirs = [
    "codex-state",
    "gemini-state",
    "dsh-state",
    "agent-state",
    "cache",
    join("home", ".cache", "claude-delegate-local"),
  ];
  for (const d of dirs) for (const [p, text] of filesUnder(join(c.root, d))) outputs.push([p, text]);
  // What dl keeps is private too: no folder or file another user could open.
  expect(dirs.filter((d) => existsSync(join(c.root, d))).flatMap((d) => openToOthers(join(c.root, d)))).toEqual([]);
  return outputs.flatMap(([channel, text]) => {
    const keys = occurrences(text);
    return Object.keys(keys).length ? [{ channel, keys }] : [];
  });
}

/**
 * What reaches a terminal without a store in between: `dl run`'s answer (text and JSON)
 * and its progress lines, and a server's log line naming a setting whose path is a key
 * (a launcher that is not there).
 */
async function fromTheShell(c: Ctx, gateway: FakeModel): Promise<[string, string][]> {
  const workdir = attackRepo(c, "shell-run");
  const out: [string, string][] = [];
  for (const json of [[], ["--json"]]) {
    gateway.script(reply.tool("read_file", { path: ".env" }), reply.text(`run ${READ_BACK}`, { model: KEYS.model }));
    const r = await dl(c, ["run", "helper", TASK, "--workdir", workdir, "--model", KEYS.model, ...json]);
    expect(r.code).toBe(0);
    out.push([`dl run ${json.join(" ")}`, r.out]);
  }
  // A gateway that refuses the key and says back what it received, escaped (its row and transcript are searched too).
  gateway.script(reply.status(401, { body: ECHOING_401 }));
  const refused = await dl(c, ["run", "helper", "t", "--workdir", workdir, "--json"]);
  expect(refused.code).not.toBe(0);
  expect(refused.out).toContain("Incorrect API key provided");
  out.push(["dl run --json, the gateway's 401 echoing the key", refused.out]);
  const missing = { ...c, env: { ...c.env, DELEGATE_DSH_LAUNCHER: join(c.root, KEYS.anthropic) } };
  const s = await connectTaskDl(missing.env, { command: c.command, cwd: c.root });
  try {
    const r = await tool(s, "submit_dsh", { tasks: [{ task: "t", model: "ds-flash", workdir }] });
    expect(r.isError).toBe(true);
    out.push(["submit_dsh without its launcher", JSON.stringify(r)]);
  } finally {
    await s.close();
  }
  out.push(["dl serve stderr, the launcher missing", s.io.stderr]);
  expect(s.io.stderr).toContain("<redacted>");
  return out;
}

type Job = { id: string; status: string; conversation_id?: string; logs?: string };

async function tool<T>(s: TaskDl, name: string, args: Record<string, unknown>): Promise<T & { isError?: boolean }> {
  const r = (await s.client.callTool({ name, arguments: args }, { timeout: 120_000 })) as {
    isError?: boolean;
    structuredContent?: T;
  };
  return { ...(r.structuredContent as T), isError: r.isError };
}

/** The first place `text` holds a key (where a conversation kept redacted differs from what was sent). */
const firstKeyAt = (text: string) =>
  Math.min(
    ...Object.values(KEYS)
      .map((k) => text.indexOf(k))
      .filter((i) => i >= 0),
  );

/**
 * A delegation that reads the .env and lists the files (the keys reach the conversation
 * through tool results and the answer), then its follow-up: it continues, and its first
 * request repeats what the model saw byte for byte up to where the first key was cut.
 */
async function delegationAndFollowUp(c: Ctx, s: TaskDl, gateway: FakeModel): Promise<string[]> {
  gateway.script(
    reply.tool("read_file", { path: ".env" }),
    reply.tool("list_files", { path: "." }),
    reply.text(`agent ${READ_BACK}`, { model: KEYS.model }),
  );
  const workdir = attackRepo(c, "sync");
  const args = { agent_name: "helper", workdir, model: KEYS.model };
  const sync = await tool<Job>(s, "delegate_to_local_agent", { ...args, task: "Read .env and list the files." });
  expect(sync.isError ? sync : null).toBeNull();
  const sent = JSON.stringify(gateway.requests.at(-1)?.body?.messages);
  gateway.script(reply.text(`again ${ECHO}`));
  const again = await tool<Job>(s, "delegate_to_local_agent", {
    ...args,
    task: "Once more",
    continue_from: sync.conversation_id,
  });
  expect(again.isError).toBeFalsy();
  const resent = JSON.stringify(gateway.requests.at(-1)?.body?.messages);
  const cut = firstKeyAt(sent);
  expect(cut).toBeGreaterThan(100);
  expect(resent.slice(0, cut)).toBe(sent.slice(0, cut));
  expect(resent.slice(cut)).toStartWith("<redacted>");
  // Keys in a reasoning block and in a tool call's arguments too.
  gateway.script(
    reply.thinking(`thinking of ${ECHO}`, reply.tool("run_bash", { command: `echo ${KEYS.pass}` })),
    () => {
      argvSeen.push(everyArgv());
      return reply.text(`task ${ECHO}`, { model: KEYS.model });
    },
  );
  const withKeys = await tool<Job>(s, "delegate_to_local_agent", { ...args, task: TASK });
  expect(withKeys.isError).toBeFalsy();
  return [sync.logs, again.logs, withKeys.logs].flatMap((l) => (l ? [l.replace(/^dl logs /, "")] : []));
}

/** Every kind of job and delegation, fed the keys: the job ids, and the delegations' log ids. */
async function runEverything(
  c: Ctx,
  s: TaskDl,
  gateway: FakeModel,
  provider: FakeModel,
  outputs: [string, string][],
): Promise<{ jobs: string[]; logs: string[] }> {
  const logs = await delegationAndFollowUp(c, s, gateway);
  // The first call that gives dl this key is a background job whose task names it.
  const providerJob = await providerAsTask(c, s, provider);
  provider.script(reply.text(`provider: your key ${KEYS.provider} works; ${ECHO}`));
  const viaProvider = await tool<Job>(s, "delegate_to_provider", {
    provider_url: provider.anthropicUrl,
    api_key: KEYS.provider,
    agent_name: "helper",
    task: PROVIDER_TASK,
    workdir: attackRepo(c, "provider"),
    model: "claude-provider-model",
  });
  expect(viaProvider.isError).toBeFalsy();
  outputs.push(["delegate_to_provider result", JSON.stringify(viaProvider)]);
  if (viaProvider.logs) logs.push(viaProvider.logs.replace(/^dl logs /, ""));
  return { jobs: [providerJob, ...(await submitJobs(c, s, gateway))], logs };
}

/** delegate_to_provider as a task: a background job whose child is handed the key; its id. */
async function providerAsTask(c: Ctx, s: TaskDl, provider: FakeModel): Promise<string> {
  provider.script(reply.tool("read_file", { path: ".env" }), () => {
    argvSeen.push(everyArgv());
    return reply.text(`provider job: ${KEYS.provider} ${READ_BACK}`);
  });
  const execution = await s.session.callTool("delegate_to_provider", {
    provider_url: provider.anthropicUrl,
    api_key: KEYS.provider,
    agent_name: "helper",
    task: PROVIDER_TASK,
    workdir: attackRepo(c, "provider-job"),
    model: "claude-provider-model",
  });
  // A background agent job either way: answered in place when quick, else as a task that settles.
  const settled = resultFromTaskOutcome(
    (await (execution as never as { settle: () => Promise<{ outcome: never }> }).settle()).outcome,
  ) as { structuredContent?: { success?: boolean; logs?: string } };
  expect(settled.structuredContent?.success).toBe(true);
  return settled.structuredContent!.logs!.replace(/^dl logs /, "");
}

/** One job of each kind (Codex and Gemini where the machine runs them). */
async function submitJobs(c: Ctx, s: TaskDl, gateway: FakeModel): Promise<string[]> {
  const submit = async (name: string, task: Record<string, unknown>) => {
    const r = await tool<{ jobs: Job[] }>(s, name, { tasks: [task] });
    expect({ name, refused: r.isError ? r : null }).toEqual({ name, refused: null });
    return r.jobs[0]!.id;
  };
  const ids: string[] = [];
  // A workdir whose path is a key: a row cannot hold it, so the job is refused, saying why.
  const keyDir = attackRepo(c, KEYS.anthropic);
  const refused = await tool(s, "submit_dsh", { tasks: [{ task: "t", model: "ds-flash", workdir: keyDir }] });
  expect(JSON.stringify(refused)).toContain("holds what looks like a key");
  ids.push(await submit("submit_dsh", { task: TASK, model: "ds-flash", workdir: attackRepo(c, "dsh") }));
  gateway.script(reply.tool("read_file", { path: ".env" }), () => {
    argvSeen.push(everyArgv());
    return reply.text(`job ${READ_BACK}`, { model: KEYS.model });
  });
  ids.push(
    await submit("submit_agent", {
      agent_name: "helper",
      task: TASK,
      workdir: attackRepo(c, "agent"),
      model: LOCAL_MODEL,
    }),
  );
  if (c.codex) {
    // A pasted key as the model: refused (the refusal is searched like every frame), then a real run.
    const refused = await tool(s, "submit_codex", {
      tasks: [{ task: TASK, workdir: attackRepo(c, "codex-refused"), model: KEYS.model }],
    });
    expect(refused.isError).toBe(true);
    ids.push(await submit("submit_codex", { task: `${TASK}; ${CODEX_TASK_WORDS}`, workdir: attackRepo(c, "codex") }));
  }
  if (c.gemini) ids.push(await submit("submit_gemini", { task: TASK, workdir: attackRepo(c, "gemini") }));
  return ids;
}

/** The set-up every run shares: fakes, agents, launcher, models file, CLIs; env for dl. */
function setUp(root: string, gateway: FakeModel, codex: FakeResponses | null): Omit<Ctx, "command"> {
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
  // dl's own key is in the settings file only (0600 in a 0700 folder), as `dl init` writes it.
  mkdirSync(join(home, ".config", "dl"), { recursive: true, mode: 0o700 });
  writeFileSync(join(home, ".config", "dl", "settings.env"), `DELEGATE_LOCAL_KEY=${KEYS.local}\n`, { mode: 0o600 });
  const env: Record<string, string> = {
    HOME: home,
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_CONFIG_HOME: join(home, ".config"),
    CODEX_HOME: join(home, ".codex"),
    DELEGATE_TEST_ISOLATION_ROOT: root,
    MY_SERVICE_TOKEN: KEYS.token,
    DB_PASS: KEYS.pass,
    github_pat: KEYS.pat,
    DSH_GATEWAY_HANDLE: KEYS.passed,
    DELEGATE_DSH_ENV_PASSTHROUGH: "DSH_GATEWAY_HANDLE",
    DELEGATE_LOCAL_URL: `${gateway.anthropicUrl}?api_key=${KEYS.urlQuery}`,
    DELEGATE_LOCAL_MODEL: LOCAL_MODEL,
    DELEGATE_LOCAL_AGENTS_DIR: agents,
    DELEGATE_PROVIDER_ALLOW_HOSTS: "127.0.0.1",
    DELEGATE_DSH_LAUNCHER: launcher,
    DELEGATE_DSH_MODELS_FILE: modelsFile,
    DELEGATE_AGY_BIN: agy,
    DELEGATE_GEMINI_ALLOW_DANGER: "1",
    DELEGATE_CODEX_STAGGER_S: "0",
    DELEGATE_DSH_STAGGER_S: "0",
    DELEGATE_CACHE_DIR: join(root, "cache"),
    ...Object.fromEntries(
      (["codex", "gemini", "dsh", "agent"] as const).map((p) => [
        `DELEGATE_${p.toUpperCase()}_STATE_DIR`,
        join(root, `${p}-state`),
      ]),
    ),
  };
  // The Codex endpoint's key, handed to the CLI by name (a name that says nothing); the fake says it back.
  env.DELEGATE_CODEX_ENV_PASSTHROUGH = "DL_FAKE_BEARER";
  env.DL_FAKE_BEARER = KEYS.codexPassed;
  if (codex) {
    env.CODEX_HOME = makeCodexHome(join(home, ".codex"), codex.baseUrl, "DL_FAKE_BEARER");
    env.DELEGATE_CODEX_BIN = CODEX_NPM_BIN;
  }
  return { root, env, gemini: !skipBwrap, codex: codex !== null };
}

function report(who: string, found: Found[]): void {
  const total = found.reduce((n, f) => n + Object.values(f.keys).reduce((a, b) => a + b, 0), 0);
  console.log(`[secret channels as ${who}] ${total} key occurrence(s) in ${found.length} channel(s)`);
  for (const f of found) console.log(`  ${f.channel}: ${JSON.stringify(f.keys)}`);
}

let gateway: FakeModel;
let provider: FakeModel;
let codex: FakeResponses;
beforeAll(async () => {
  gateway = await startFakeModel({ apiKey: KEYS.local });
  provider = await startFakeModel({ apiKey: KEYS.provider });
  codex = startFakeResponses((r) => {
    codexArgvSeen.push(everyArgv());
    return { kind: "ok", text: `codex ${ECHO}; you sent ${r.authorization}` };
  });
});
afterAll(async () => {
  await gateway?.stop();
  await provider?.stop();
  await codex?.stop();
});

describe("no key in any channel, after jobs of every kind and delegations fed keys from every source", () => {
  test("as root (or whoever runs the suite)", async () => {
    const c: Ctx = { ...setUp(tempDir("secret-channels"), gateway, codex), command: [requireBinary()] };
    const found = await attack(c, gateway, provider);
    report("the suite's user", found);
    expect(found).toEqual([]);
  }, 300_000);

  const setpriv = Bun.which("setpriv");
  test.skipIf(!setpriv || process.getuid?.() !== 0)(
    "as an ordinary user (nobody, through setpriv)",
    async () => {
      // The suite's root (and /tmp, in some containers) is private to root: nobody gets a
      // folder of its own in the world-writable /var/tmp, and a copy of dl it may run.
      const root = mkdtempSync(join("/var/tmp", "dl-secret-channels-"));
      try {
        chmodSync(root, 0o755);
        copyFileSync(requireBinary(), join(root, "dl"));
        const c: Ctx = {
          ...setUp(root, gateway, null),
          gemini: false, // an ordinary user's jail needs /dev/net/tun open to it (issue 29's tests)
          command: [setpriv!, "--reuid=65534", "--regid=65534", "--clear-groups", "--", join(root, "dl")],
          owner: 65534,
        };
        chownTree(root, 65534);
        const found = await attack(c, gateway, provider);
        report("nobody", found);
        expect(found).toEqual([]);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
    300_000,
  );
});

describe("the search itself", () => {
  test("finds a key printed escaped, %-encoded, over two lines, and each of those serialized again (a JSON string inside JSON)", () => {
    const forms = HELD.flatMap((k) =>
      escapings(k).flatMap((f) => [f, JSON.stringify(f), JSON.stringify(JSON.stringify(f))]),
    );
    expect(forms.filter((f) => Object.values(occurrences(`said: ${f}.`)).join() !== "1")).toEqual([]);
    expect(occurrences(ECHOING_401)).toEqual(
      Object.fromEntries(HELD.map((k) => [Object.entries(KEYS).find(([, v]) => v === k)![0], 3])),
    );
    // A key short of its last character is none, however it is written.
    const near = HELD.flatMap((k) => escapings(k.slice(0, -1)).map((f) => JSON.stringify(f)));
    expect(occurrences(`said: <redacted> ${near.join(" ")}`)).toEqual({});
  });
});

describe("a refusal that echoes what it refused", () => {
  test("a mistyped flag, an unknown command, a bad setting's value and dl serve's own refusals never print a key dl holds (from the settings file, the environment, handed by name) or one shaped like a key", async () => {
    const c: Ctx = { ...setUp(tempDir("secret-refusals"), gateway, null), command: [requireBinary()] };
    // A key pasted into another setting of the file: refused, value and all, before dl has loaded a setting.
    const file = join(c.env.HOME!, ".config", "dl", "settings.env");
    const said: [string, string][] = [];
    for (const key of [KEYS.local, KEYS.token, KEYS.passed, KEYS.anthropic]) {
      for (const args of [
        ["status", `--${key}`],
        [key],
        ["help", key],
        ["--version", key],
        ["serve", `--${key}`],
        ["serve", key],
      ]) {
        const r = await dl(c, args);
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
        said.push([`dl ${args.join(" ")}`, r.out]);
      }
      for (const args of [["jobs"], ["serve"]]) {
        const r = await dl({ ...c, env: { ...c.env, DELEGATE_CODEX_MAX_CONCURRENT: key } }, args);
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
        said.push([`DELEGATE_CODEX_MAX_CONCURRENT=<key> dl ${args.join(" ")}`, r.out]);
      }
      writeFileSync(file, `DELEGATE_LOCAL_KEY=${KEYS.local}\nDELEGATE_DSH_MAX_QUEUE=${key}\n`, { mode: 0o600 });
      const r = await dl(c, ["status"]);
      expect(r.code).toBe(2);
      said.push(["a key pasted into the file's DELEGATE_DSH_MAX_QUEUE, dl status", r.out]);
    }
    expect(said.filter(([, out]) => !out.includes("<redacted>")).map(([what]) => what)).toEqual([]);
    const found = said.flatMap(([channel, text]) => (Object.keys(occurrences(text)).length ? [channel] : []));
    expect(found).toEqual([]);
  }, 120_000);
});

/** A launcher that leaves the key it was handed in a log and in a binary file, then runs until it is killed. */
const HANGING_LAUNCHER = `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --out-dir) out="$2"; shift 2 ;; *) shift 2 ;; esac; done
mkdir -p "$out"
printf 'SQLite format 3\\000%s\\n' "$DSH_GATEWAY_HANDLE" > "$out/state.db"
echo "signed in with $DSH_GATEWAY_HANDLE" > "$out/log.tmp" && mv "$out/log.tmp" "$out/launcher.log"
exec sleep 600
`;

describe("a job whose supervisor died before the run ended", () => {
  test("what its child left in the job's folder is checked when it is reaped or cancelled: text redacted, a binary holding a key removed", async () => {
    const c: Ctx = { ...setUp(tempDir("secret-reaped"), gateway, null), command: [requireBinary()] };
    writeFileSync(c.env.DELEGATE_DSH_LAUNCHER!, HANGING_LAUNCHER);
    const stateDir = c.env.DELEGATE_DSH_STATE_DIR!;
    for (const ending of [["reap"], ["cancel"]]) {
      // The server is closed before the supervisor is killed (the job outlives it, as jobs
      // do): a live server would reap the orphan itself at its next admission pass, and
      // whether that or the shell's dl reap came first would be the scheduler's choice.
      const s = await connectTaskDl(c.env, { cwd: c.root });
      let id: string;
      try {
        const r = await tool<{ jobs: Job[] }>(s, "submit_dsh", {
          tasks: [{ task: "t", model: "ds-flash", workdir: attackRepo(c, `orphan-${ending[0]}`) }],
        });
        id = r.jobs[0]!.id;
        await until(
          () => existsSync(join(stateDir, "jobs", id, "out", "launcher.log")),
          "the launcher to write its log",
        );
      } finally {
        await s.close();
      }
      const out = join(stateDir, "jobs", id, "out");
      const supervisor = supervisorOf(stateDir, id);
      process.kill(supervisor, "SIGKILL");
      await until(() => !pidAlive(supervisor), "the supervisor to be gone");
      const ended = await dl(c, ending[0] === "reap" ? ["reap"] : ["cancel", id]);
      expect({ ending, said: ended.out.includes(id) }).toEqual({ ending, said: true });
      expect(readFileSync(join(out, "launcher.log"), "utf8")).toBe("signed in with <redacted>\n");
      expect(existsSync(join(out, "state.db"))).toBe(false);
    }
    expect(filesUnder(stateDir).filter(([, text]) => text.includes(KEYS.passed))).toEqual([]);
  }, 120_000);
});

function chownTree(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  for (const name of readdirSync(dir, { recursive: true }) as string[]) chownSync(join(dir, name), uid, uid);
}
