import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { parseConfig } from "../../src/config.ts";
import { createServer } from "../../src/mcp/server.ts";
import { answerToolsListFromCatalogue, catalogueKey } from "../../src/mcp/tool-catalogue.ts";
import { defaultDeps } from "../../src/services.ts";
import { connectDl, testEnv } from "../helpers/dl.ts";

/** tools/list of the server built from source (no catalogue: the SDK converts every schema). */
async function sourceToolList(env: Record<string, string | undefined>) {
  const server = createServer(defaultDeps(parseConfig(testEnv(env)), "test"));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "dl-test", version: "1" });
  await client.connect(clientSide);
  try {
    return await client.listTools();
  } finally {
    await client.close();
  }
}

async function binaryToolList(env: Record<string, string | undefined>) {
  const s = await connectDl(env);
  try {
    return await s.client.listTools();
  } finally {
    await s.close();
  }
}

describe("tools/list from the catalogue built into dist/dl", () => {
  // Settings that tool texts could plausibly mention: any that changes the list and is not
  // part of catalogueKey makes the binary's answer differ from the source's here.
  const environments: Record<string, Record<string, string>> = {
    defaults: {},
    "a batch cap of 7 (outside the catalogue: the SDK answers)": { DELEGATE_MAX_BATCH_SIZE: "7" },
    "other models, gates and switches": {
      DELEGATE_LOCAL_MODEL: "local-other",
      DELEGATE_LOCAL_CODING_MODEL: "local-coder",
      DELEGATE_CODEX_MODEL: "gpt-5.5",
      DELEGATE_CODEX_ALLOW_DANGER: "1",
      DELEGATE_GEMINI_ALLOW_DANGER: "1",
      DELEGATE_RUN_BASH: "0",
      DELEGATE_MAX_TURNS_LOCAL: "12",
      DELEGATE_CODEX_MAX_CONCURRENT: "12",
    },
  };
  for (const [name, env] of Object.entries(environments)) {
    test(`is exactly what the server from source answers: ${name}`, async () => {
      const [fromBinary, fromSource] = await Promise.all([binaryToolList(env), sourceToolList(env)]);
      expect(fromBinary.tools.length).toBeGreaterThan(15);
      expect(fromBinary).toEqual(fromSource);
    }, 30_000);
  }

  test("a catalogue serves only the configuration it was made for", async () => {
    const config = parseConfig(testEnv());
    const other = parseConfig(testEnv({ DELEGATE_MAX_BATCH_SIZE: "9" }));
    const catalogue = {
      key: catalogueKey(config),
      result: JSON.stringify({ tools: [{ name: "only", inputSchema: { type: "object" } }] }),
    };
    expect(
      answerToolsListFromCatalogue(
        new McpServer({ name: "t", version: "1" }, { capabilities: { tools: {} } }),
        other,
        catalogue,
      ),
    ).toBe(false);
    const server = new McpServer({ name: "t", version: "1" }, { capabilities: { tools: {} } });
    expect(answerToolsListFromCatalogue(server, config, catalogue)).toBe(true);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "dl-test", version: "1" });
    await client.connect(clientSide);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["only"]);
    await client.close();
  });
});
