import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { probeModels } from "../backends/models-list.ts";
import { backendProbeTargets } from "../backends/probe-targets.ts";
import type { Config } from "../config.ts";
import { describeError } from "../errors.ts";
import { jobsSummary } from "../jobs/maintenance.ts";
import { sysIdentities } from "../jobs/sys-adapters.ts";
import { createServer } from "../mcp/server.ts";
import { defaultDeps } from "../services.ts";
import { jobStateDirs } from "../sys/paths.ts";
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

/** The host's client side, without a JSON Schema validator: this check only counts tools. */
const acceptAll: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input, errorMessage: undefined }) as never,
};

async function handshake(config: Config): Promise<CheckLine> {
  const server = createServer(defaultDeps(config, VERSION));
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "dl-serve-check", version: VERSION }, { jsonSchemaValidator: acceptAll });
  try {
    await server.connect(a);
    await client.connect(b);
    const { tools } = await client.listTools();
    return { level: "ok", text: `the server starts and answers initialize and tools/list (${tools.length} tools)` };
  } catch (e) {
    return { level: "fail", text: `the MCP server could not start: ${describeError(e)}` };
  } finally {
    await client.close().catch(() => undefined);
    await server.close().catch(() => undefined);
  }
}

async function gateway(config: Config): Promise<CheckLine[]> {
  const backends = await Promise.all(
    backendProbeTargets(config).map(async (t) => ({
      lane: t.lane,
      ...(await probeModels({ endpointUrl: t.url, apiKey: t.apiKey, headers: t.headers, timeoutMs: 3000 })),
    })),
  );
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
  lines.push(...(await gateway(config)));
  return lines;
}

export function renderChecks(lines: readonly CheckLine[]): string {
  const mark = { ok: "ok  ", warn: "WARN", fail: "FAIL" } as const;
  const failed = lines.filter((l) => l.level === "fail").length;
  const verdict = failed
    ? `dl serve would not work: ${failed} problem(s) marked FAIL above`
    : "dl serve would start; an MCP host can connect with: dl serve";
  return `${[...lines.map((l) => `${mark[l.level]} ${l.text}`), "", verdict].join("\n")}\n`;
}
