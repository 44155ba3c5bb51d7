import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { type FakeModel, startFakeModel } from "../fixture/fake-model.ts";
import { codexServeEnv } from "../helpers/codex-home.ts";
import { connectDl, type DlSession, tempDir } from "../helpers/dl.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";

/**
 * Claude Code hands the model only JSON.stringify(structuredContent), so a refusal that
 * is only text reaches the model as nothing. Through dist/dl with every backend listed
 * (DELEGATE_TOOLS=all): every tool that takes a workdir, handed dl's own cache dir,
 * answers `failure_kind: "workdir_forbidden"` and the variable that placed that dir in
 * structuredContent; every other tool does the same for arguments it cannot take.
 */
const KEY = "sk-structured-failures";
let fake: FakeModel;
let session: DlSession;
let tasks: TaskDl;
let cacheDir: string;

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  minimum?: number;
  anyOf?: JsonSchema[];
};

/** The structured part's fields a refused workdir must carry, or what it carried instead. */
function workdirRefusal(r: { isError?: boolean; structuredContent?: Record<string, unknown> }): true | unknown {
  const sc = r.structuredContent ?? {};
  const ok =
    r.isError === true &&
    sc.failure_kind === "workdir_forbidden" &&
    sc.variable === "DELEGATE_CACHE_DIR" &&
    String(sc.error).includes("overlaps dl's own state");
  return ok || { isError: r.isError, structuredContent: sc };
}

/** Whether the schema has a `workdir` field, at the top or in a task list's items. */
function takesWorkdir(s: JsonSchema): boolean {
  if (s.properties?.workdir) return true;
  return Object.values(s.properties ?? {}).some((p) => p.items !== undefined && takesWorkdir(p.items));
}

/** The smallest arguments the schema accepts, with `workdir` set wherever the schema has one. */
function minimalArgs(s: JsonSchema, workdir: string, name = ""): unknown {
  if (name === "workdir") return workdir;
  if (name === "provider_url") return fake.anthropicUrl;
  if (s.enum) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : (s.type ?? s.anyOf?.[0]?.type);
  if (type === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, p] of Object.entries(s.properties ?? {})) {
      if (s.required?.includes(k) || k === "workdir") out[k] = minimalArgs(p, workdir, k);
    }
    return out;
  }
  if (type === "array") return [minimalArgs(s.items ?? {}, workdir)];
  if (type === "integer" || type === "number") return s.minimum ?? 1;
  if (type === "boolean") return false;
  return "x";
}

async function call(name: string, args: unknown) {
  const r = await session.client.callTool({ name, arguments: args as Record<string, unknown> }, { timeout: 60_000 });
  return r as { isError?: boolean; structuredContent?: Record<string, unknown>; content: { text?: string }[] };
}

beforeAll(async () => {
  fake = await startFakeModel({ apiKey: KEY });
  const root = tempDir("structured-failures");
  const agentsDir = join(root, "agents");
  mkdirSync(agentsDir);
  writeFileSync(join(agentsDir, "x.md"), "---\nname: x\n---\nHelp.\n");
  cacheDir = join(root, "cache");
  mkdirSync(cacheDir);
  const modelsFile = join(root, "dsh-models.json");
  writeFileSync(modelsFile, JSON.stringify({ models: { x: { model: "deepseek-v4-flash", enabled: true } } }));
  const env = {
    ...codexServeEnv(root, fake.url, join(root, "codex-state")),
    DELEGATE_TOOLS: "all",
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_CACHE_DIR: cacheDir,
    DELEGATE_PROVIDER_ALLOW_HOSTS: "127.0.0.1",
    DELEGATE_DSH_LAUNCHER: join(import.meta.dir, "..", "fixture", "fake-dsh.sh"),
    DELEGATE_DSH_MODELS_FILE: modelsFile,
    DELEGATE_DSH_STATE_DIR: join(root, "dsh-state"),
    DELEGATE_AGY_BIN: join(import.meta.dir, "..", "fixture", "fake-agy.sh"),
    DELEGATE_GEMINI_ALLOW_DANGER: "1",
    DELEGATE_GEMINI_STATE_DIR: join(root, "gemini-state"),
    DELEGATE_AGENT_STATE_DIR: join(root, "agent-state"),
  };
  session = await connectDl(env);
  tasks = await connectTaskDl(env);
});
afterAll(async () => {
  await session?.close();
  await tasks?.close();
  await fake?.stop();
});

describe("every tool's failure is in structuredContent", () => {
  test("a refused workdir: failure_kind and the variable behind it, from every tool that takes one", async () => {
    const { tools } = await session.client.listTools();
    const withWorkdir = tools.filter((t) => takesWorkdir(t.inputSchema as JsonSchema));
    // The tools the issue names must be among them, so the loop cannot pass by finding none.
    for (const name of ["delegate_to_local_agent", "delegate_batch", "delegate_to_provider", "submit_agent"]) {
      expect(withWorkdir.map((t) => t.name)).toContain(name);
    }
    expect(withWorkdir.length).toBeGreaterThanOrEqual(9);
    const wrong: Record<string, unknown> = {};
    for (const t of withWorkdir) {
      const args = minimalArgs(t.inputSchema as JsonSchema, cacheDir) as Record<string, unknown>;
      if (t.name === "delegate_to_provider") args.api_key = KEY;
      const verdict = workdirRefusal(await call(t.name, args));
      if (verdict !== true) wrong[t.name] = verdict;
    }
    expect(wrong).toEqual({});
  }, 120_000);

  test("the same refusal when the call is made as an MCP task: an immediate answer, structured, from every tool", async () => {
    const { tools } = await session.client.listTools();
    const wrong: Record<string, unknown> = {};
    for (const t of tools.filter((t) => takesWorkdir(t.inputSchema as JsonSchema))) {
      const args = minimalArgs(t.inputSchema as JsonSchema, cacheDir) as Record<string, unknown>;
      const execution = await tasks.session.callTool(t.name, args as never);
      const { outcome } = await (execution as unknown as { settle: () => Promise<{ outcome: never }> }).settle();
      const verdict = execution.kind === "immediate" ? workdirRefusal(resultFromTaskOutcome(outcome)) : execution.kind;
      if (verdict !== true) wrong[t.name] = verdict;
    }
    expect(wrong).toEqual({});
  }, 120_000);

  test("arguments a tool cannot take: failure_kind invalid_arguments, from every tool with a required field", async () => {
    const { tools } = await session.client.listTools();
    const required = tools.filter((t) => ((t.inputSchema as JsonSchema).required ?? []).length > 0);
    const none = tools.filter((t) => !required.includes(t)).map((t) => t.name);
    // Only the two argument-free tools cannot be handed wrong arguments.
    expect(none.sort()).toEqual(["list_local_agents", "local_backend_status"]);
    const wrong: Record<string, unknown> = {};
    for (const t of required) {
      const r = await call(t.name, {});
      const sc = r.structuredContent ?? {};
      if (!(r.isError && sc.failure_kind === "invalid_arguments" && String(sc.error).includes("invalid arguments"))) {
        wrong[t.name] = sc;
      }
    }
    expect(wrong).toEqual({});
  }, 120_000);

  test("an unknown tool and a thrown refusal are structured too", async () => {
    const unknown = await call("no_such_tool", {});
    expect(unknown.structuredContent).toMatchObject({ failure_kind: "unknown_tool", code: "bad_input" });
    const missing = await call("delegate_to_local_agent", { task: "x", agent_name: "nobody", workdir: tempDir("p") });
    expect(missing.isError).toBe(true);
    const sc = missing.structuredContent ?? {};
    expect(typeof sc.failure_kind).toBe("string");
    expect(String(sc.error)).toContain("nobody");
  });
});
