import { describe, expect, test } from "bun:test";
import type { ServerContext } from "@modelcontextprotocol/server";
import { parseConfig } from "../../src/config.ts";
import type { MachineFacts } from "../../src/jobs/provider-module.ts";
import { PROVIDER_MODULES } from "../../src/jobs/providers/index.ts";
import { toolJsonSchema } from "../../src/mcp/json-schema.ts";
import { backendVerdicts } from "../../src/mcp/tool-availability.ts";
import { toolCallHandler } from "../../src/mcp/tool-call.ts";
import { ToolSurface } from "../../src/mcp/tool-surface.ts";
import { defaultDeps } from "../../src/services.ts";

/** A machine with nothing installed, or with the binaries and files named. */
const machine = (have: string[] = []): MachineFacts => ({
  which: (bin) => (have.includes(bin) ? `/usr/bin/${bin}` : null),
  exists: (file) => have.includes(file),
});

const config = (env: Record<string, string> = {}) => parseConfig({ ...process.env, DELEGATE_TOOLS: undefined, ...env });

/** What a host pays per session for a tool list: characters / 4 of name, description and input schema. */
function tokens(surface: ToolSurface): number {
  const chars = surface
    .toolsList()
    .reduce((n, t) => n + t.name.length + (t.description ?? "").length + JSON.stringify(t.inputSchema).length, 0);
  return Math.round(chars / 4);
}

describe("which backends' tools are listed", () => {
  test("a machine without Codex, the Gemini gate or a dsh launcher lists only the agent tools, saying why", () => {
    const v = backendVerdicts(config(), PROVIDER_MODULES, machine());
    expect(v.agent?.listed).toBe(true);
    expect(v.codex).toMatchObject({ listed: false, why: expect.stringContaining("Codex CLI (codex) is not on PATH") });
    expect(v.gemini).toMatchObject({ listed: false, why: expect.stringContaining("DELEGATE_GEMINI_ALLOW_DANGER") });
    expect(v.dsh).toMatchObject({ listed: false, why: expect.stringContaining("launcher") });
  });

  test("Codex on PATH and the Gemini gate list their tools", () => {
    const v = backendVerdicts(config({ DELEGATE_GEMINI_ALLOW_DANGER: "1" }), PROVIDER_MODULES, machine(["codex"]));
    expect([v.codex?.listed, v.gemini?.listed]).toEqual([true, true]);
  });

  test("DELEGATE_TOOLS names the backends to list, or all of them", () => {
    const some = backendVerdicts(config({ DELEGATE_TOOLS: "agent,dsh" }), PROVIDER_MODULES, machine());
    // In the providers' order (PROVIDERS).
    expect(Object.entries(some).map(([b, x]) => [b, x.listed])).toEqual([
      ["codex", false],
      ["gemini", false],
      ["dsh", true],
      ["agent", true],
    ]);
    const all = backendVerdicts(config({ DELEGATE_TOOLS: "ALL" }), PROVIDER_MODULES, machine());
    expect(Object.values(all).every((x) => x.listed)).toBe(true);
  });

  test("DELEGATE_TOOLS with an unknown backend is a configuration error naming it", () => {
    expect(() => config({ DELEGATE_TOOLS: "agent,bard" })).toThrow(/DELEGATE_TOOLS/);
  });
});

/** The whole list as a host gets it (names, titles, descriptions, both schemas, annotations): characters / 4 of its JSON. */
const wholeTokens = (surface: ToolSurface) => Math.round(JSON.stringify(surface.toolsList()).length / 4);

describe("what the model reads", () => {
  const all = new ToolSurface(defaultDeps(config({ DELEGATE_TOOLS: "all" }), "test")).toolsList();

  test("each tool's listed schemas are its own builders' schemas converted alone, byte for byte (shared ones converted once)", () => {
    const surface = new ToolSurface(defaultDeps(config({ DELEGATE_TOOLS: "all" }), "test"));
    const listed = surface.toolsList();
    const builders = new Set(listed.map((t) => surface.tool(t.name)!.def.output));
    expect(builders.size).toBeLessThan(listed.length); // some tools share one
    for (const t of listed) {
      const def = surface.tool(t.name)!.def;
      const alone = { input: toolJsonSchema(def.input(), "input"), output: toolJsonSchema(def.output(), "output") };
      expect({ name: t.name, input: JSON.stringify(t.inputSchema), output: JSON.stringify(t.outputSchema) }).toEqual({
        name: t.name,
        input: JSON.stringify(alone.input),
        output: JSON.stringify(alone.output),
      });
    }
  });

  test("the default tools/list (no coding CLI on the machine) is under 4,000 tokens whole", () => {
    const surface = new ToolSurface(defaultDeps(config({ DELEGATE_TOOLS: "agent" }), "test"));
    expect(surface.names()).toHaveLength(8);
    expect(wholeTokens(surface)).toBeLessThan(4000);
  });

  test("no schema repeats zod's safe-integer bounds or says `any extra property` ({})", () => {
    const text = JSON.stringify(all);
    expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER));
    expect(text).not.toContain('"additionalProperties":{}');
  });

  test("no description names a setting the model cannot act on, nor says a sentence another one says", () => {
    const seen = new Map<string, string>();
    for (const t of all) {
      const text = `${t.title} ${t.description} ${JSON.stringify(t.inputSchema)} ${JSON.stringify(t.outputSchema)}`;
      expect(`${t.name}: ${text.match(/DELEGATE_[A-Z_]+/)?.[0] ?? "none"}`).toBe(`${t.name}: none`);
      expect(text).not.toMatch(/\ba agent\b/i);
      for (const sentence of (t.description ?? "").split(/(?<=[.:;])\s+/).filter((x) => x.length >= 50)) {
        expect(`${t.name}: ${sentence} (also in ${seen.get(sentence)})`).toBe(
          `${t.name}: ${sentence} (also in undefined)`,
        );
        seen.set(sentence, t.name);
      }
    }
  });

  test("the local agent's description says which tool is for what", () => {
    const d = all.find((t) => t.name === "delegate_to_local_agent")!.description!;
    for (const other of [
      "submit_agent",
      "delegate_batch",
      "delegate_to_codex",
      "submit_codex",
      "submit_gemini",
      "submit_dsh",
    ])
      expect(d).toContain(other);
    expect(d).toContain("private data");
  });
});

describe("the tool list a host pays for", () => {
  test("the default configuration on a machine with Codex lists under 3,000 tokens", () => {
    const surface = new ToolSurface(defaultDeps(config({ DELEGATE_TOOLS: "agent,codex" }), "test"));
    expect(surface.names()).toContain("submit_codex");
    expect(surface.names()).not.toContain("submit_gemini");
    expect(tokens(surface)).toBeLessThan(3000);
  });

  test("tools/list is converted once and kept", () => {
    const surface = new ToolSurface(defaultDeps(config({ DELEGATE_TOOLS: "all" }), "test"));
    expect(surface.toolsList()).toBe(surface.toolsList());
    expect(surface.names()).toHaveLength(19);
  });

  test("a call to a tool that is not listed here is refused with the reason", async () => {
    const surface = new ToolSurface(defaultDeps(config({ DELEGATE_TOOLS: "agent" }), "test"));
    const ctx = { mcpReq: { signal: new AbortController().signal, notify: async () => {} } } as never as ServerContext;
    const r = await toolCallHandler(surface, undefined)({ params: { name: "submit_gemini", arguments: {} } }, ctx);
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toContain(
      "submit_gemini is not offered by this server: not named by DELEGATE_TOOLS",
    );
  });
});
