import { InMemoryTransport, type JSONRPCMessage } from "@modelcontextprotocol/server";
import { probeBackends } from "../backends/probe-targets.ts";
import type { Config } from "../config.ts";
import { describeError } from "../errors.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { PROVIDER_MODULES } from "../jobs/providers/index.ts";
import { jobsSummary } from "../jobs/shell/maintenance.ts";
import { createServer } from "../mcp/server.ts";
import { backendVerdicts } from "../mcp/tool-availability.ts";
import { defaultDeps } from "../services.ts";
import { jobStateDirs } from "../sys/paths.ts";
import { shellWord } from "../sys/shell-word.ts";
import { dirState } from "../sys/writable.ts";
import { VERSION } from "../version.ts";
import { checkModels } from "./status-models.ts";
import { namedStateDirs } from "./status-report.ts";

/**
 * `dl serve --check`: what `dl serve` does before it answers, run in a terminal where its
 * errors can be read. An MCP host that only says "Failed to connect" hides dl's stderr;
 * this prints it. Blocking problems stop the server (or its job tools); warnings do not,
 * but delegations will fail until they are fixed. Nothing is created or started.
 */
export type CheckLine = { level: "ok" | "warn" | "fail"; text: string };

/** One request over an in-memory pair, answered by the server (its result, or its error as a throw). */
async function ask(
  client: InMemoryTransport,
  replies: Map<number, (m: JSONRPCMessage) => void>,
  id: number,
  method: string,
  params: object,
): Promise<Record<string, unknown>> {
  const reply = new Promise<JSONRPCMessage>((resolve) => replies.set(id, resolve));
  await client.send({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage);
  const m = (await reply) as { result?: Record<string, unknown>; error?: { message: string } };
  if (m.error) throw new Error(`${method}: ${m.error.message}`);
  return m.result ?? {};
}

/** The 2025-11-25 handshake and tools/list, as a host does them, against an in-process server. */
async function handshake(config: Config): Promise<CheckLine> {
  const deps = defaultDeps(config, VERSION);
  const server = createServer(deps, "legacy");
  const [client, end] = InMemoryTransport.createLinkedPair();
  const replies = new Map<number, (m: JSONRPCMessage) => void>();
  client.onmessage = (m) => {
    const id = (m as { id?: unknown }).id;
    if (typeof id === "number") replies.get(id)?.(m);
  };
  try {
    await server.connect(end);
    await client.start();
    const clientInfo = { name: "dl-serve-check", version: VERSION };
    await ask(client, replies, 1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo });
    await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const { tools } = (await ask(client, replies, 2, "tools/list", {})) as { tools: unknown[] };
    return { level: "ok", text: `the server starts and answers initialize and tools/list (${tools.length} tools)` };
  } catch (e) {
    return { level: "fail", text: `the MCP server could not start: ${describeError(e)}` };
  } finally {
    await server.close().catch(() => undefined);
  }
}

/** Which backends' tools tools/list names, and why the others are not there. */
function toolLines(config: Config): CheckLine[] {
  return Object.entries(backendVerdicts(config, PROVIDER_MODULES)).map(([backend, v]) => ({
    level: "ok",
    text: v.listed ? `${backend} tools listed (${v.why})` : `${backend} tools not listed: ${v.why}`,
  }));
}

async function gateway(config: Config): Promise<CheckLine[]> {
  const backends = await probeBackends(config);
  const lines: CheckLine[] = backends.map((b) =>
    b.reachable && !b.error
      ? { level: "ok", text: `gateway ${b.lane} answers at ${b.url} (${b.models.length} models)` }
      : {
          level: "warn",
          text: `gateway ${b.lane}: ${b.error ?? "unreachable"} (delegations will fail until it answers)`,
        },
  );
  for (const f of checkModels(config, backends).failed) lines.push({ level: "warn", text: f });
  return lines;
}

export async function serveChecks(config: Config): Promise<CheckLine[]> {
  const lines: CheckLine[] = [{ level: "ok", text: "configuration parsed (every DELEGATE_* variable is valid)" }];
  for (const [name, dir] of namedStateDirs(config)) {
    const s = dirState(dir);
    if (s.problem)
      lines.push({ level: "fail", text: `state dir ${name} (${dir}): ${s.problem}; its tools will refuse to run` });
  }
  for (const j of jobsSummary(jobStateDirs(config.paths), sysIdentities))
    if (j.error) lines.push({ level: "fail", text: `${j.provider} job store unusable: ${j.error}` });
  lines.push(await handshake(config));
  lines.push(...toolLines(config));
  lines.push(...(await gateway(config)));
  return lines;
}

/**
 * The verdict names the command a host runs: the one a registration needs (an absolute
 * path, or npx; sys/self-command.ts typedCommand).
 */
export function renderChecks(lines: readonly CheckLine[], self: readonly string[]): string {
  const mark = { ok: "ok  ", warn: "WARN", fail: "FAIL" } as const;
  const failed = lines.filter((l) => l.level === "fail").length;
  const command = [...self, "serve"].map(shellWord).join(" ");
  const verdict = failed
    ? `dl serve would not work: ${failed} problem(s) marked FAIL above; fix them, then run ${command} --check again`
    : `dl serve would start; an MCP host can connect with: ${command}`;
  return `${[...lines.map((l) => `${mark[l.level]} ${l.text}`), "", verdict].join("\n")}\n`;
}
