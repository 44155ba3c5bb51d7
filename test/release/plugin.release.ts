/**
 * `npm run test:release`: the Claude Code plugin (plugin/, listed by the repository's own
 * marketplace in .claude-plugin/marketplace.json), with the real Claude Code from npm
 * (a pinned devDependency) in a fresh HOME, and dl installed on PATH from dist/release's
 * npm tarballs. `claude plugin validate --strict` passes for the plugin and the
 * marketplace; `marketplace add` + `install` (options given with --config, the key as a
 * secret) succeed; `claude mcp list` shows the plugin's server connected; `claude plugin
 * details` lists the agents, commands and server and prints the projected token cost; a
 * `claude -p` session delegates through the plugin's server to a fake model, reached
 * with the plugin's endpoint and key and the model of dl's settings file (the plugin's
 * model option is empty, and an empty option leaves the file in charge); and a /dl:
 * command runs its dl command.
 *
 * Claude Code itself talks to a scripted fake Anthropic API on 127.0.0.1 (ANTHROPIC_BASE_URL);
 * its non-essential traffic (updates, telemetry) is turned off. Nothing reaches beyond
 * this machine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { LAUNCHER, platformPackage, tarballName } from "../../scripts/npm-packages.ts";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { HOST, type Ran, ROOT, run, SYSTEM_PATH } from "./helpers.ts";
import { npmHome } from "./npm-helpers.ts";

const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const PLUGIN = "dl@delegate-local";
const SERVER = "plugin:dl:delegate-local";
const TOOL = "mcp__plugin_dl_delegate-local__delegate_to_local_agent";
const KEY = "dl-plugin-test-key-4f1c9b27";
/** The model dl's settings file names; the plugin's model option is left empty. */
const FILE_MODEL = "model-from-settings-file";

let claudeApi: FakeModel;
let modelApi: FakeModel;
let user: ReturnType<typeof npmHome>;
let project: string;

/** Claude Code as a user runs it: their HOME and PATH (with dl), offline but for the fake API. */
function claude(args: string[], cwd = project, who: { env: Record<string, string> } = user): Promise<Ran> {
  return run(
    [CLAUDE, ...args],
    {
      ...who.env,
      ANTHROPIC_BASE_URL: claudeApi.url,
      ANTHROPIC_API_KEY: "sk-ant-test-not-a-real-key",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    cwd,
  );
}

const ok = (r: Ran) => expect(`${r.stdout}${r.stderr}exit ${r.code}`).toEndWith("exit 0");

beforeAll(async () => {
  claudeApi = await startFakeModel();
  modelApi = await startFakeModel({ apiKey: KEY });
  user = npmHome("claude-user");
  const tarballs = [platformPackage(HOST), LAUNCHER].map((n) =>
    join(ROOT, "dist", "release", tarballName(n, pkg.version)),
  );
  const r = await run(["npm", "install", "-g", "--offline", ...tarballs], user.env);
  if (r.code !== 0) throw new Error(`installing dl from the release tarballs failed:\n${r.stderr}`);
  // dl's settings file, as dl init writes it: private, in a private folder.
  const settings = join(user.home, ".config", "dl");
  mkdirSync(settings, { recursive: true, mode: 0o700 });
  writeFileSync(join(settings, "settings.env"), `DELEGATE_LOCAL_MODEL=${FILE_MODEL}\n`, { mode: 0o600 });
  project = join(user.home, "project");
  mkdirSync(join(project, ".claude", "agents"), { recursive: true });
  writeFileSync(
    join(project, ".claude", "agents", "helper.md"),
    "---\nname: helper\ndescription: Answers one question.\n---\nYou answer in one line.\n",
  );
}, 120_000);
afterAll(async () => {
  await claudeApi?.stop();
  await modelApi?.stop();
});

describe("the dl plugin in Claude Code", () => {
  test("claude plugin validate --strict passes for the plugin and for the repository's marketplace", async () => {
    for (const path of [join(ROOT, "plugin"), ROOT]) {
      const r = await claude(["plugin", "validate", "--strict", path], ROOT);
      ok(r);
      expect(r.stdout).toContain("Validation passed");
    }
  }, 60_000);

  test("marketplace add <repository> and install dl@delegate-local, with two options (the key as a secret)", async () => {
    ok(await claude(["plugin", "marketplace", "add", ROOT]));
    const config = [`endpoint=${modelApi.anthropicUrl}`, `key=${KEY}`];
    const r = await claude(["plugin", "install", PLUGIN, ...config.flatMap((c) => ["--config", c])]);
    ok(r);
    expect(r.stdout).toContain(`Successfully installed plugin: ${PLUGIN}`);
    // The key went to Claude Code's secure storage, not into the settings files.
    const settings = readFileSync(join(user.home, ".claude", "settings.json"), "utf8");
    expect(settings).toContain(modelApi.anthropicUrl);
    expect(settings).not.toContain(KEY);
  }, 60_000);

  test("claude mcp list shows the plugin's server, dl serve from PATH, connected", async () => {
    const r = await claude(["mcp", "list"]);
    ok(r);
    expect(r.stdout).toMatch(new RegExp(`^${SERVER}: dl serve - ✔ Connected$`, "m"));
  }, 60_000);

  test("claude plugin details lists the agents, commands and server, and the projected token cost", async () => {
    const r = await claude(["plugin", "details", PLUGIN]);
    ok(r);
    expect(r.stdout).toMatch(/Agents \(3\)\s+.*coder/);
    for (const part of [
      "reviewer",
      "test-writer",
      "Skills (5)",
      "jobs",
      "usage",
      "status",
      "MCP servers (1)  delegate-local",
    ])
      expect(r.stdout).toContain(part);
    const cost = r.stdout.match(/Always-on:\s+~?(\d+) tok/);
    expect(cost).not.toBeNull();
    console.error(`claude plugin details ${PLUGIN}: always-on ~${cost![1]} tokens per session`);
  }, 60_000);

  test("claude -p delegates through the plugin's server: the plugin's endpoint and key, the settings file's model (its option left empty)", async () => {
    modelApi.script(reply.text("helper says: 42"));
    claudeApi.always(orchestrator);
    // As a user of claude -p does, the tool is allowed up front (there is nobody to ask).
    const r = await claude(["-p", "Ask the local helper agent what the answer is.", "--allowedTools", TOOL]);
    ok(r);
    expect(r.stdout).toContain("The helper answered: 42");
    const [agentCall] = modelApi.requests;
    expect(agentCall?.model).toBe(FILE_MODEL);
    expect(JSON.stringify(agentCall?.body.system)).toContain("You answer in one line.");
    // The fake refuses any other key with a 401, so the secret option reached dl.
    expect(agentCall?.headers["x-api-key"]).toBe(KEY);
  }, 180_000);

  test("/dl:jobs runs dl jobs, which lists the delegation the plugin's server ran, and hands its output to the session", async () => {
    claudeApi.reset();
    claudeApi.always(reply.text("shown"));
    const r = await claude(["-p", "/dl:jobs"]);
    ok(r);
    const prompt = JSON.stringify(claudeApi.requests.at(-1)?.body.messages);
    expect(prompt).toContain("<command-name>/dl:jobs</command-name>");
    // The shell's dl and the plugin's dl serve share one job state.
    expect(prompt).toContain(`delegation  done`);
    expect(prompt).toContain(`delegate_to_local_agent on ${FILE_MODEL}`);
  }, 120_000);

  test("claude plugin uninstall removes the plugin and its server", async () => {
    ok(await claude(["plugin", "uninstall", PLUGIN]));
    const r = await claude(["mcp", "list"]);
    expect(r.stdout).not.toContain(SERVER);
  }, 60_000);

  test("Claude Code queued nothing for servers elsewhere: no telemetry events were written to send later", () => {
    expect(existsSync(join(user.home, ".claude", "telemetry"))).toBe(false);
  });
});

describe("the dl plugin before dl is installed", () => {
  test("claude mcp list names the missing executable", async () => {
    const { home, env } = npmHome("claude-no-dl");
    const nobody = { env: { ...env, PATH: SYSTEM_PATH } };
    ok(await claude(["plugin", "marketplace", "add", ROOT], home, nobody));
    ok(await claude(["plugin", "install", PLUGIN], home, nobody));
    const r = await claude(["mcp", "list"], home, nobody);
    expect(r.stdout).toContain(
      `${SERVER}: dl serve - ✘ Failed to connect — ENOENT: Executable not found in $PATH: "dl"`,
    );
  }, 60_000);
});

/** Tool calls (name by id) and results in a Messages request. */
function turns(req: RecordedRequest): { used: Map<string, string>; results: { name: string; text: string }[] } {
  const used = new Map<string, string>();
  const results: { name: string; text: string }[] = [];
  for (const m of req.body.messages as { content: unknown }[]) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as { type: string; id?: string; name?: string; tool_use_id?: string }[]) {
      if (b.type === "tool_use") used.set(b.id ?? "", b.name ?? "");
      if (b.type === "tool_result")
        results.push({ name: used.get(b.tool_use_id ?? "") ?? "", text: JSON.stringify(b) });
    }
  }
  return { used, results };
}

/**
 * The orchestrating model: load the deferred dl tool with ToolSearch, call it with the
 * project's helper agent, then report what came back. Claude Code's side requests (a
 * title, a summary) get plain text.
 */
function orchestrator(req: RecordedRequest) {
  const tools = (req.body.tools as { name: string }[] | undefined)?.map((t) => t.name) ?? [];
  if (!tools.includes("ToolSearch")) return reply.text("dl plugin test");
  const { results } = turns(req);
  const delegated = results.find((r) => r.name === TOOL);
  if (delegated) {
    return reply.text(
      delegated.text.includes("helper says: 42") ? "The helper answered: 42" : `no answer: ${delegated.text}`,
    );
  }
  if (results.some((r) => r.name === "ToolSearch"))
    return reply.tool(TOOL, { agent_name: "helper", task: "What is the answer?", workdir: project });
  return reply.tool("ToolSearch", { query: `select:${TOOL}` });
}
