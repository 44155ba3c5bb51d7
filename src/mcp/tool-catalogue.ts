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

/** `result` is the JSON text of the answer, parsed on the first `tools/list`. */
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

/** Answers `tools/list` from the built catalogue when it was made for this configuration. */
export function answerToolsListFromCatalogue(
  server: McpServer,
  config: Config,
  catalogue: ToolCatalogue | undefined = builtCatalogue(),
): boolean {
  if (!catalogue || catalogue.key !== catalogueKey(config)) return false;
  let result: ListToolsResult | undefined;
  server.server.setRequestHandler(ListToolsRequestSchema, () => {
    result ??= JSON.parse(catalogue.result) as ListToolsResult;
    return result;
  });
  return true;
}
