import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { parseConfig } from "../../src/config.ts";
import { built, isStandIn } from "../../src/lazy-schema.ts";
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

  test("a catalogue serves only the configuration and the tools it was made for", async () => {
    const config = parseConfig(testEnv());
    const other = parseConfig(testEnv({ DELEGATE_MAX_BATCH_SIZE: "9" }));
    const serverWith = (description: string) => {
      const s = new McpServer({ name: "t", version: "1" }, { capabilities: { tools: {} } });
      s.registerTool("only", { title: "Only", description }, () => ({ content: [] }));
      return s;
    };
    // What the catalogue says beyond names and texts shows whether it answered.
    const tool = {
      name: "only",
      title: "Only",
      description: "one tool",
      inputSchema: { type: "object" as const, marker: 1 },
    };
    const catalogue = { key: catalogueKey(config), result: JSON.stringify({ tools: [tool] }) };
    expect(answerToolsListFromCatalogue(serverWith("one tool"), other, catalogue)).toBe(false);
    expect(answerToolsListFromCatalogue(serverWith("a tool whose text changed"), config, catalogue)).toBe(false);
    const server = serverWith("one tool");
    expect(answerToolsListFromCatalogue(server, config, catalogue)).toBe(true);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "dl-test", version: "1" });
    await client.connect(clientSide);
    expect((await client.listTools()).tools).toEqual([tool]);
    await client.close();
  });

  test("no tool nests a lazy stand-in inside another schema (zod's JSON Schema conversion needs the real one)", () => {
    const server = createServer(defaultDeps(parseConfig(testEnv()), "test"));
    const tools = (
      server as unknown as { _registeredTools: Record<string, { inputSchema?: object; outputSchema?: object }> }
    )._registeredTools;
    const nested: string[] = [];
    const seen = new Set<object>();
    const walk = (value: unknown, path: string, top: boolean): void => {
      if (typeof value !== "object" || value === null || seen.has(value)) return;
      seen.add(value);
      if (!top && isStandIn(value)) nested.push(path);
      const def = (built(value) as { _zod?: { def?: object } })._zod?.def;
      const children = def ?? (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype ? value : {});
      for (const [k, v] of Object.entries(children)) walk(v, `${path}.${k}`, false);
    };
    for (const [name, t] of Object.entries(tools)) {
      walk(t.inputSchema, `${name}.input`, true);
      walk(t.outputSchema, `${name}.output`, true);
    }
    expect(seen.size).toBeGreaterThan(200);
    expect(nested).toEqual([]);
  });
});
