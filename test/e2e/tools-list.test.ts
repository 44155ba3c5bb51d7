import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { connectDl, type DlSession, tempDir } from "../helpers/dl.ts";

/**
 * What the model reads, as a host receives it from the compiled `dist/dl serve` (the
 * descriptions are .txt files embedded in the binary, so the in-process surface test
 * cannot see a build that lost or doubled one): the default tool set of a machine with
 * no coding CLI, whole (names, titles, descriptions, input and output schemas), under
 * 4,000 tokens (characters / 4 of its JSON, as bench/tools-list.ts measures it).
 */
let session: DlSession;
let tools: { name: string; description?: string; inputSchema: unknown; outputSchema?: unknown }[];
beforeAll(async () => {
  session = await connectDl({
    // The default set: no DELEGATE_TOOLS, no Codex CLI, no dsh launcher, Gemini not allowed.
    DELEGATE_TOOLS: undefined,
    DELEGATE_CODEX_BIN: join(tempDir("no-codex"), "codex"),
    DELEGATE_DSH_LAUNCHER: join(tempDir("no-dsh"), "dsh-herdr.sh"),
  });
  tools = (await session.client.listTools()).tools;
});
afterAll(() => session?.close());

describe("the default tools/list of dist/dl serve", () => {
  test("is the agent tools only, and under 4,000 tokens whole", () => {
    expect(tools.map((t) => t.name).sort()).toEqual([
      "cancel_agent",
      "delegate_batch",
      "delegate_to_local_agent",
      "delegate_to_provider",
      "list_local_agents",
      "local_backend_status",
      "poll_agent",
      "submit_agent",
    ]);
    expect(Math.round(JSON.stringify(tools).length / 4)).toBeLessThan(4000);
  });

  test("names no setting the model cannot act on, repeats no bound, says which tool is for what", () => {
    const text = JSON.stringify(tools);
    expect(text.match(/DELEGATE_[A-Z_]+/g) ?? []).toEqual([]);
    expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER));
    expect(text).not.toMatch(/\ba agent\b/i);
    const local = tools.find((t) => t.name === "delegate_to_local_agent")!.description!;
    for (const other of ["submit_agent", "delegate_batch", "delegate_to_codex", "submit_gemini", "submit_dsh"])
      expect(local).toContain(other);
  });
});
