import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, type ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config.ts";

/**
 * The answer to `tools/list`, made when the binary is built (build.ts runs the server from
 * source once and keeps what it answered). The SDK converts every tool's zod schemas to
 * JSON Schema on each `tools/list`; at start-up that took ~15 ms and ~3.5 MB of a server
 * that should idle in 50 (bench/startup). Running from source there is none, and the
 * SDK's own answer is used.
 */
declare const DL_TOOL_CATALOGUE: ToolCatalogue | undefined;

/** `result` is the JSON text of the answer. */
export type ToolCatalogue = { key: string; result: string };

/**
 * The settings that change what `tools/list` says (delegate_batch names its cap). A
 * catalogue serves only a configuration with the same key; any other gets the SDK's answer.
 */
export function catalogueKey(config: Config): string {
  return JSON.stringify({ maxBatchSize: config.agent.maxBatchSize });
}

function builtCatalogue(): ToolCatalogue | undefined {
  return typeof DL_TOOL_CATALOGUE === "object" ? DL_TOOL_CATALOGUE : undefined;
}

type RegisteredTexts = Record<string, { title?: string; description?: string; enabled: boolean }>;

/**
 * Whether the catalogue lists the tools this server registered, by name, title and
 * description, in order: a second check besides the key, cheap because it builds no
 * schema, so a tool text that came to depend on another setting is not served stale.
 * The SDK keeps its tools in a private field; without it, the answer is "no".
 */
function listsRegisteredTools(server: McpServer, result: ListToolsResult): boolean {
  const registered = (server as unknown as { _registeredTools?: RegisteredTexts })._registeredTools;
  if (typeof registered !== "object") return false;
  const names = Object.keys(registered).filter((name) => registered[name]!.enabled);
  return (
    names.length === result.tools.length &&
    result.tools.every(
      (t, i) =>
        t.name === names[i] &&
        t.title === registered[t.name]!.title &&
        t.description === registered[t.name]!.description,
    )
  );
}

/** Answers `tools/list` from the built catalogue when it was made for this configuration and these tools. */
export function answerToolsListFromCatalogue(
  server: McpServer,
  config: Config,
  catalogue: ToolCatalogue | undefined = builtCatalogue(),
): boolean {
  if (!catalogue || catalogue.key !== catalogueKey(config)) return false;
  const result = JSON.parse(catalogue.result) as ListToolsResult;
  if (!listsRegisteredTools(server, result)) return false;
  server.server.setRequestHandler(ListToolsRequestSchema, () => result);
  return true;
}
