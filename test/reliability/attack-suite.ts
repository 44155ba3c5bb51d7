import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { type Identity, identityNames, makeIdentity } from "../helpers/run-as.ts";
import { until } from "../helpers/until.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";
import { exists, hostGit, hostGitCommands, hostTools } from "./attack-host.ts";
import { LAYOUTS, type LayoutId, layoutPackages, RUST_HOME } from "./attack-layouts.ts";
import { payload, payloadJs, prelude, REFUSED_WORKDIRS, ROUTES, type Route, type ToolCall } from "./attack-routes.ts";

/**
 * The attack suite for one kind of delegate, through dist/dl serve: a hostile agy in the
 * real jail (`gemini`), an agent's run_bash with DELEGATE_RUN_BASH_SANDBOX=1 driven by a
 * scripted model (`bash`), or the agent's own write_file/edit_file (`tools`: an agent with
 * `tools: Read, Write, Edit`). As root and as an ordinary user (run-as.ts). One job per
 * layout plants every route of that layout (attack-routes.ts); then the host looks, as
 * the user would: first at the tree as the job left it (what changed, what exists), then
 * with its ordinary git commands in every checkout, then for the routes' markers. Each
 * route is its own test.
 */

export type Delegate = "gemini" | "bash" | "tools";

const KEY = "sk-attack-suite-key-0001";
const FAKE_AGY = new URL("../fixture/fake-agy.sh", import.meta.url).pathname;

/** What one job left, as the host found it, per route. */
interface Found {
  /** The job's own account: its result text (Gemini: the job row; run_bash: the tool result). */
  outcome: string;
  failureKind: string | null;
  /** The jail_git_tampered verdict's text (what dl moved out and put back), or "". */
  tamper: string;
  /** tools: each call's result, by call id. */
  toolResults: Map<string, { isError: boolean; text: string }>;
  changed: Map<string, string[]>;
  present: Map<string, string[]>;
  repos: Map<string, string[]>;
  hookKeys: Map<string, string[]>;
  markers: string[];
}

interface Ctx {
  id: Identity;
  delegate: Delegate;
  client: Client;
  fake: FakeModel | null;
  root: string;
  markers: string;
}

/** DELEGATE_LOCAL_AGENTS_DIR inside the repo layout's workdir (route dl-agents-dir): the settings may put it anywhere. */
export const AGENTS_IN_TREE = "repo/dl-agents";
/** XDG_CONFIG_HOME (dl's settings file, the dsh models file) and CODEX_HOME inside it too (routes dl-settings-file, dl-codex-home). */
export const XDG_IN_TREE = "repo/dl-xdg";
export const CODEX_HOME_IN_TREE = "repo/dl-codex";

/** The files dl and the Codex CLI read there, as the user left them (settings.env: 0600, or dl refuses it). */
export function plantDlReads(root: string): void {
  mkdirSync(join(root, XDG_IN_TREE, "dl"), { recursive: true });
  mkdirSync(join(root, XDG_IN_TREE, "neola-lab"), { recursive: true });
  mkdirSync(join(root, CODEX_HOME_IN_TREE), { recursive: true });
  writeFileSync(join(root, XDG_IN_TREE, "dl/settings.env"), "DELEGATE_LOG_LEVEL=info\n", { mode: 0o600 });
  writeFileSync(join(root, XDG_IN_TREE, "neola-lab/dsh-models.json"), "{}\n");
  writeFileSync(join(root, CODEX_HOME_IN_TREE, "config.toml"), "# the user's Codex settings\n");
}

function session(id: Identity, delegate: Delegate, fake: FakeModel | null, root: string): Promise<Client> {
  const agents = join(root, AGENTS_IN_TREE);
  mkdirSync(agents, { recursive: true });
  writeFileSync(join(agents, "helper.md"), "---\nname: helper\ndescription: h\n---\nHelp.\n");
  writeFileSync(join(agents, "coder.md"), "---\nname: coder\ndescription: c\ntools: Read, Write, Edit\n---\nCode.\n");
  plantDlReads(root);
  const bin = join(id.base, "bin");
  mkdirSync(bin, { recursive: true });
  copyFileSync(FAKE_AGY, join(bin, "agy"));
  id.own(id.base);
  const env = id.env({
    DELEGATE_AGY_BIN: join(bin, "agy"),
    DELEGATE_GEMINI_ALLOW_DANGER: "1",
    DELEGATE_LOCAL_URL: fake?.anthropicUrl,
    DELEGATE_LOCAL_KEY: fake ? KEY : undefined,
    DELEGATE_LOCAL_AGENTS_DIR: agents,
    XDG_CONFIG_HOME: join(root, XDG_IN_TREE),
    CODEX_HOME: join(root, CODEX_HOME_IN_TREE),
    DELEGATE_LOCAL_MODEL: "attack-model",
    DELEGATE_RUN_BASH_SANDBOX: delegate === "bash" ? "1" : undefined,
  });
  const [command, ...args] = id.argv([id.dl, "serve"]);
  const transport = new StdioClientTransport({ command: command!, args, env, cwd: id.base, stderr: "pipe" });
  const client = new Client({ name: "attack-suite", version: "1.0.0" });
  return client.connect(transport).then(() => client);
}

const routesOf = (layout: LayoutId) => ROUTES.filter((r) => r.layout === layout);

/** Bytes of a file, or null when it is absent (or not a file). */
function bytesOf(path: string): string | null {
  try {
    return readFileSync(path).toString("base64");
  } catch {
    return null;
  }
}

const isRepo = (dir: string) => ["HEAD", "objects", "refs"].every((n) => exists(join(dir, n)));

function hookKeysOf(path: string, keys: string[]): Record<string, string | undefined> {
  try {
    const pkg = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    return Object.fromEntries(keys.map((k) => [k, pkg[k] === undefined ? undefined : JSON.stringify(pkg[k])]));
  } catch {
    return Object.fromEntries(keys.map((k) => [k, "(unreadable)"]));
  }
}

/** The tools' calls for a route, each with an id; the payload script each route writes first is allowed. */
function toolCallsOf(c: Ctx, r: Route, w: string): { id: string; call: ToolCall; expectRefused: boolean }[] {
  const calls = r.tools(w, payload(c.markers, r.id), payloadJs(c.markers, r.id));
  return calls.map((call, i) => ({
    id: `toolu_${r.id.replace(/-/g, "_")}_${i}`,
    call,
    expectRefused: !call.input.path?.startsWith(".payloads/") && !ALLOWED_STEPS.has(`${r.id}:${call.input.path}`),
  }));
}

/** Steps of a route that are ordinary writes on their own (a repository is made only by the last one). */
const ALLOWED_STEPS = new Set([
  "package-json-tool-key:lintstaged/docs/p.cjs",
  "new-package-json-tool-key:lintstaged/notes/q.cjs",
  "pyproject-tool-table:pyhooks/pyhooks_evil.py",
  "bun-tsconfig-paths:x/evil.ts",
  "package-yaml-prettier:lintstaged/docs/y.cjs",
  "pytest-entrypoint:pyhooks/zz_helper_plugin.py",
  "bun-dotenv:bunenv.cjs",
  "sub-gitfile:.evil-sub/HEAD",
  "sub-gitfile:.evil-sub/config",
  "sub-gitfile:.evil-sub/objects/info/packs",
  "bare-trap:trap/HEAD",
  "bare-trap:trap/config",
  "bare-trap:trap/objects/info/packs",
  "commondir-trap:trap2/HEAD",
  "commondir-trap:trap2/c/config",
  "commondir-trap:trap2/c/objects/info/packs",
  "commondir-trap:trap2/c/refs/heads/main",
  "bare-driver:drivers/.gitattributes",
  "bare-driver:drivers/data.txt",
  "global-driver:drivers/g/.gitattributes",
  "global-driver:drivers/g/data.txt",
]);

async function runGemini(c: Ctx, w: string, script: string): Promise<Pick<Found, "outcome" | "failureKind">> {
  const file = join(c.id.base, "bin", `plant-${Date.now()}-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(file, script, { mode: 0o755 });
  c.id.own(file);
  const sub = (await c.client.callTool(
    { name: "submit_gemini", arguments: { tasks: [{ task: `SCRIPT=${file}`, workdir: w }] } },
    { timeout: 120_000 },
  )) as {
    structuredContent?: { jobs?: { id: string }[] };
    content: { text: string }[];
    isError?: boolean;
  };
  const jobId = sub.structuredContent?.jobs?.[0]?.id;
  if (!jobId) return { outcome: sub.content[0]?.text ?? "", failureKind: "submit_refused" };
  const job = await until(
    async () => {
      const r = (await c.client.callTool(
        { name: "poll_gemini", arguments: { ids: [jobId] } },
        { timeout: 60_000 },
      )) as {
        structuredContent?: { jobs?: Record<string, unknown>[] };
      };
      const j = r.structuredContent?.jobs?.[0];
      return j && !["queued", "running"].includes(String(j.status)) ? j : null;
    },
    `gemini job ${jobId} to end`,
    120_000,
  );
  return { outcome: JSON.stringify(job), failureKind: (job.failure_kind as string | null) ?? null };
}

type Msg = { role: string; content: unknown };
type ResultBlock = { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean };

/** The tool results the model was sent back after its first turn. */
function toolResultsOf(fake: FakeModel, from: number): ResultBlock[] {
  const req = fake.requests.slice(from).find((q) => JSON.stringify(q.body).includes("tool_result"));
  const msgs = (req?.body.messages ?? []) as Msg[];
  const last = msgs[msgs.length - 1];
  return Array.isArray(last?.content) ? (last.content as ResultBlock[]).filter((b) => b.type === "tool_result") : [];
}

const textOf = (b: ResultBlock) => (typeof b.content === "string" ? b.content : JSON.stringify(b.content ?? ""));

/** An agent delegation whose model answers `first`, then "done"; the tool results it was sent back. */
async function runAgent(c: Ctx, w: string, first: Parameters<FakeModel["script"]>[1], agent: string) {
  const fake = c.fake!;
  const from = fake.requests.length;
  fake.script(first!, reply.text("done"));
  const r = (await c.client.callTool(
    { name: "delegate_to_local_agent", arguments: { agent_name: agent, task: "do the work", workdir: w } },
    { timeout: 180_000 },
  )) as { content: { text: string }[]; isError?: boolean; structuredContent?: Record<string, unknown> };
  const results = toolResultsOf(fake, from);
  const failureKind = r.isError ? String(r.structuredContent?.failure_kind ?? "error") : null;
  return { outcome: `${r.content[0]?.text ?? ""}\n${results.map(textOf).join("\n")}`, failureKind, results };
}

type JobOutcome = Pick<Found, "outcome" | "failureKind" | "toolResults" | "tamper">;

/** The job for one layout: every route planted at once, by the delegate under test. */
async function runJob(c: Ctx, layout: LayoutId): Promise<JobOutcome> {
  const w = join(c.root, LAYOUTS[layout].workdir);
  const routes = routesOf(layout);
  const script = `${prelude(c.markers)}\n${routes.map((r) => r.sh).join("\n")}\n`;
  if (c.delegate === "gemini") {
    const r = await runGemini(c, w, script);
    const tamper = r.failureKind === "jail_git_tampered" ? String(JSON.parse(r.outcome).final_response) : "";
    return { ...r, tamper, toolResults: new Map() };
  }
  if (c.delegate === "bash") {
    const r = await runAgent(c, w, reply.tool("run_bash", { command: script }), "helper");
    const tamper = /\[jail_git_tampered: ([^\n]*)\]/.exec(r.outcome)?.[1] ?? "";
    return { outcome: r.outcome, failureKind: r.failureKind, tamper, toolResults: new Map() };
  }
  const uses = routes.flatMap((r) => toolCallsOf(c, r, w));
  if (uses.length === 0) return { outcome: "", failureKind: null, tamper: "", toolResults: new Map() };
  const r = await runAgent(
    c,
    w,
    { tools: uses.map((u) => ({ id: u.id, name: u.call.name, input: u.call.input })) },
    "coder",
  );
  const toolResults = new Map(
    r.results.map((b) => [b.tool_use_id ?? "", { isError: b.is_error === true, text: textOf(b) }]),
  );
  return { outcome: r.outcome, failureKind: r.failureKind, tamper: "", toolResults };
}

/** Before the job: the bytes of every path a route says must stay, and its package.json keys. */
function snapshot(w: string, routes: Route[]) {
  const bytes = new Map<string, string | null>();
  const keys = new Map<string, Record<string, string | undefined>>();
  for (const r of routes) {
    for (const p of r.unchanged ?? []) bytes.set(p, bytesOf(join(w, p)));
    if (r.hookKeys) keys.set(r.id, hookKeysOf(join(w, r.hookKeys.file), r.hookKeys.keys));
  }
  return { bytes, keys };
}

/** The tree as the job left it, per route (before the host runs anything there). */
function lookAtTree(w: string, routes: Route[], before: ReturnType<typeof snapshot>) {
  const changed = new Map<string, string[]>();
  const present = new Map<string, string[]>();
  const repos = new Map<string, string[]>();
  const hookKeys = new Map<string, string[]>();
  for (const r of routes) {
    changed.set(
      r.id,
      (r.unchanged ?? []).filter((p) => bytesOf(join(w, p)) !== before.bytes.get(p)),
    );
    present.set(
      r.id,
      (r.absent ?? []).filter((p) => exists(join(w, p))),
    );
    repos.set(
      r.id,
      (r.notRepo ?? []).filter((p) => isRepo(join(w, p))),
    );
    if (r.hookKeys) {
      const now = hookKeysOf(join(w, r.hookKeys.file), r.hookKeys.keys);
      const was = before.keys.get(r.id) ?? {};
      hookKeys.set(
        r.id,
        r.hookKeys.keys.filter((k) => now[k] !== was[k]),
      );
    }
  }
  return { changed, present, repos, hookKeys };
}

async function jobAndLook(c: Ctx, layout: LayoutId): Promise<Found> {
  const w = join(c.root, LAYOUTS[layout].workdir);
  const routes = routesOf(layout);
  const before = snapshot(w, routes);
  const job = await runJob(c, layout);
  const tree = lookAtTree(w, routes, before);
  hostGitCommands(c.id, c.root, layout, routes);
  hostTools(c.id, c.root, layout);
  const markers = readdirSync(c.markers);
  return { ...job, ...tree, markers };
}

export function buildLayouts(c: Pick<Ctx, "id" | "root">, only?: LayoutId): void {
  const modules = layoutPackages(c.id.base);
  for (const l of Object.values(LAYOUTS)) {
    if (only && l.id !== only) continue;
    const r = c.id.run(["sh", "-c", l.build], {
      cwd: c.root,
      env: c.id.env({
        DL_ATTACK_NODE_MODULES: modules,
        DL_ATTACK_RUST_HOME: RUST_HOME ?? "/nonexistent",
        GIT_AUTHOR_NAME: "u",
        GIT_AUTHOR_EMAIL: "u@x",
        GIT_COMMITTER_NAME: "u",
        GIT_COMMITTER_EMAIL: "u@x",
      }),
    });
    if (r.code !== 0) throw new Error(`layout ${l.id}: ${r.stderr}`);
  }
}

/** One route's verdict, from what the host found after its layout's job. */
function expectRouteHeld(c: Ctx, r: Route, f: Found): void {
  expect(f.markers).not.toContain(r.id);
  expect(f.changed.get(r.id)).toEqual([]);
  expect(f.present.get(r.id)).toEqual([]);
  expect(f.repos.get(r.id)).toEqual([]);
  if (r.hookKeys) expect(f.hookKeys.get(r.id)).toEqual([]);
  if (c.delegate !== "tools") {
    for (const p of r.named ?? []) expect(f.tamper).toContain(`${p} (new)`);
    return;
  }
  const w = join(c.root, LAYOUTS[r.layout].workdir);
  for (const u of toolCallsOf(c, r, w).filter((x) => x.expectRefused)) {
    const got = f.toolResults.get(u.id);
    expect({ call: u.call.input.path, isError: got?.isError }).toEqual({ call: u.call.input.path, isError: true });
    if (!r.anyRefusal) expect(got?.text).toContain("path_refused");
  }
}

export function attackSuite(delegate: Delegate): void {
  for (const name of identityNames()) {
    describe.skipIf(skipBwrap && delegate !== "tools")(
      `${delegate} as ${name}: nothing the delegate writes runs on the host`,
      () => {
        let c: Ctx;
        beforeAll(async () => {
          const id = makeIdentity(name, `atk-${delegate}`);
          const fake = delegate === "gemini" ? null : await startFakeModel({ apiKey: KEY });
          const root = join(id.base, "proj");
          const markers = join(id.base, "markers");
          mkdirSync(root);
          mkdirSync(markers);
          id.own(id.base);
          buildLayouts({ id, root });
          c = { id, delegate, fake, root, markers, client: await session(id, delegate, fake, root) };
        }, 60_000);
        afterAll(async () => {
          await c?.client.close();
          await c?.fake?.stop();
          c?.id.cleanup();
        });

        for (const layout of Object.keys(LAYOUTS) as LayoutId[]) {
          describe(`workdir: ${LAYOUTS[layout].workdir}`, () => {
            let found: Found;
            beforeAll(async () => {
              found = await jobAndLook(c, layout);
              console.log(
                `${delegate} as ${name}, ${layout}: failure_kind ${found.failureKind}; markers ${JSON.stringify(found.markers)}`,
              );
              if (process.env.ATTACK_DEBUG) console.log(found.outcome);
            }, 240_000);
            test("the job ran: jailed, measured by dl, what it planted moved out and named", () => {
              if (delegate === "tools") return expect(found.toolResults.size).toBeGreaterThan(0);
              const planted = routesOf(layout).some((r) => (r.named ?? []).length > 0);
              if (delegate === "gemini") {
                expect(found.failureKind).toBe(planted ? "jail_git_tampered" : null);
                expect(found.outcome).toContain('"files_changed"');
              } else {
                expect(found.outcome).toContain("--- measured by dl ---");
                expect(found.tamper !== "").toBe(planted);
              }
            });
            for (const r of routesOf(layout)) {
              if (delegate === "tools" && r.tools("/w", "", "").length === 0) continue;
              test(`${r.klass}: ${r.id}`, () => expectRouteHeld(c, r, found));
            }
          });
        }

        test("a workdir inside a git dir or a protected folder is refused", async () => {
          for (const { workdir } of REFUSED_WORKDIRS) {
            const w = join(c.root, workdir);
            const put = `${prelude(c.markers)}\nput in-gitdir hooks/pre-commit\n`;
            const r =
              delegate === "gemini"
                ? await runGemini(c, w, put)
                : await runAgent(
                    c,
                    w,
                    delegate === "bash"
                      ? reply.tool("run_bash", { command: put })
                      : reply.tool("write_file", {
                          path: "hooks/pre-commit",
                          content: payload(c.markers, "in-gitdir"),
                        }),
                    delegate === "bash" ? "helper" : "coder",
                  );
            expect({ workdir, failure: r.failureKind }).toEqual({
              workdir,
              failure: expect.stringMatching(/workdir_forbidden|submit_refused/),
            });
            expect(r.outcome).toContain("workdir");
          }
          hostGit(c.id, join(c.root, "repo"), "commit", "-q", "--allow-empty", "-m", "after");
          expect(readdirSync(c.markers)).not.toContain("in-gitdir");
        });
      },
    );
  }
}
