import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { until } from "./until.ts";

/** The compiled binary every end-to-end test drives (`npm test` builds it first). */
const DL_BIN = resolve(import.meta.dir, "..", "..", "dist", "dl");

export function requireBinary(): string {
  if (!existsSync(DL_BIN))
    throw new Error(`${DL_BIN} is missing: run \`npm test\` (it builds first) or \`npm run build\``);
  return DL_BIN;
}

/** A temporary folder; `using t = tempFolder(…)` (or `t.cleanup()`) deletes it. */
export type TempFolder = Disposable & { readonly dir: string; cleanup(): void };

/**
 * The suite's one temp-dir helper: a fresh, canonical folder inside `parent` (default:
 * the suite's isolated root, which the preload deletes at the end of the run anyway).
 */
export function tempFolder(prefix: string, parent = process.env.DL_TEST_ROOT): TempFolder {
  if (!parent) throw new Error("DL_TEST_ROOT unset: tests must run through bunfig's preload");
  const dir = realpathSync(mkdtempSync(join(parent, `${prefix.replace(/-$/, "")}-`)));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  return { dir, cleanup, [Symbol.dispose]: cleanup };
}

/** The path of a fresh tempFolder, for a folder that lives as long as the run. */
export function tempDir(prefix: string, parent?: string): string {
  return tempFolder(prefix, parent).dir;
}

/** The suite's environment plus overrides; `undefined` removes a variable. */
export function testEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...extra })) if (v !== undefined) env[k] = v;
  return env;
}

export type DlSession = {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close: () => Promise<void>;
};

/** Start `dl serve` (in `o.cwd`: the project it serves) and connect the SDK's own Client to it over stdio. */
export async function connectDl(
  env: Record<string, string | undefined> = {},
  o: { cwd?: string } = {},
): Promise<DlSession> {
  // Loaded here, not at the top: most files import this one for tempFolder or runDl, and
  // the SDK's client costs every such file ~0.15 s of CPU to evaluate (measured here).
  const [{ Client }, { StdioClientTransport }] = await Promise.all([
    import("@modelcontextprotocol/client"),
    import("@modelcontextprotocol/client/stdio"),
  ]);
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["serve"],
    env: testEnv(env),
    stderr: "pipe",
    cwd: o.cwd,
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const client = new Client({ name: "dl-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, stderr: () => err, close: () => client.close() };
}

/** The `dl serve` sessions one test file opens; `closeAll` (its afterAll) ends every one. */
export function sessionPool(): {
  serve(env: Record<string, string | undefined>): Promise<DlSession>;
  closeAll(): Promise<void>;
} {
  const open: DlSession[] = [];
  return {
    async serve(env) {
      const s = await connectDl(env);
      open.push(s);
      return s;
    },
    async closeAll() {
      await Promise.all(open.map((s) => s.close().catch(() => undefined)));
    },
  };
}

/** What a tool call answered: its error flag, first text block and structured content. */
export type ToolAnswer<T> = { isError?: boolean; text: string; data: T };

/** One tools/call on a session, with a timeout long enough for job tools on a loaded machine. */
export async function callTool<T = Record<string, unknown>>(
  s: Pick<DlSession, "client">,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolAnswer<T>> {
  const res = (await s.client.callTool({ name, arguments: args }, { timeout: 120_000 })) as {
    isError?: boolean;
    content: { type: string; text: string }[];
    structuredContent?: unknown;
  };
  return { isError: res.isError, text: res.content[0]?.text ?? "", data: (res.structuredContent ?? {}) as T };
}

/**
 * `dl serve` against a model endpoint, with one global agent "helper" (no frontmatter
 * limits) in its own agents dir: the set-up of most delegation tests.
 */
export async function connectWithHelperAgent(
  url: string,
  env: Record<string, string | undefined> = {},
): Promise<DlSession> {
  const agentsDir = tempDir("agents");
  await Bun.write(`${agentsDir}/helper.md`, "---\nname: helper\n---\nHelp.\n");
  return connectDl({ DELEGATE_LOCAL_URL: url, DELEGATE_LOCAL_AGENTS_DIR: agentsDir, ...env });
}

/** Run the binary to completion and collect its output. */
export async function runDl(args: string[], env: Record<string, string | undefined> = {}, stdin?: string) {
  const proc = Bun.spawn([requireBinary(), ...args], {
    env: testEnv(env),
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Polls a job with `tool` (poll_dsh, poll_codex, …) until it has left queued and running; its view then. */
export async function pollUntilEnded<J extends { status: string }>(s: DlSession, tool: string, id: string): Promise<J> {
  return until(
    async () => {
      const [j] = (await callTool<{ jobs: J[] }>(s, tool, { ids: [id] })).data.jobs;
      return j && !["queued", "running"].includes(j.status) ? j : null;
    },
    `job ${id} to end`,
    60_000,
  );
}
