/**
 * A build step: what `dl serve` answers to `tools/list` with the default settings, made by
 * running the server from source once (src/mcp/tool-catalogue.ts serves it from the
 * binary). The answer is taken from the wire, as a client would receive it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { parseConfig } from "../src/config.ts";
import { createServer } from "../src/mcp/server.ts";
import { catalogueKey, type ToolCatalogue } from "../src/mcp/tool-catalogue.ts";
import { defaultDeps } from "../src/services.ts";

export async function toolCatalogue(version: string): Promise<ToolCatalogue> {
  // Defaults only: nothing of the builder's own environment may end up in the binary.
  const home = mkdtempSync(join(tmpdir(), "dl-catalogue-"));
  try {
    const config = parseConfig({ HOME: home, PATH: "/usr/bin:/bin" }, { cwd: home });
    const server = createServer(defaultDeps(config, version));
    const [client, side] = InMemoryTransport.createLinkedPair();
    const answer = new Promise<JSONRPCMessage>((resolve) => {
      client.onmessage = resolve;
    });
    await server.connect(side);
    await client.start();
    await client.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const reply = await answer;
    await server.close();
    if (!("result" in reply) || !Array.isArray((reply.result as { tools?: unknown }).tools)) {
      throw new Error(`tool-catalogue: tools/list did not answer with tools: ${JSON.stringify(reply).slice(0, 200)}`);
    }
    return { key: catalogueKey(config), result: JSON.stringify(reply.result) };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
