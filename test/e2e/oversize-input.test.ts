import { describe, expect, test } from "bun:test";
import { JobStore } from "../../src/store/jobs.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { lineReader } from "../helpers/lines.ts";
import { modernRequest } from "../helpers/modern.ts";

/**
 * Issue 10 item 7: one stdin line over the message cap must not break `dl serve`'s stdio.
 * A raw process, as Claude Code talks to it: the oversize request gets a JSON-RPC error,
 * the next request is answered, and closing stdin still ends the server.
 */
type Rpc = { id?: number | string | null; result?: unknown; error?: { code: number; message: string } };

function startServe(stateDir: string) {
  const proc = Bun.spawn([requireBinary(), "serve"], {
    env: testEnv({ DELEGATE_CODEX_STATE_DIR: stateDir }),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const next = lineReader(proc.stdout);
  const send = (msg: unknown) => {
    proc.stdin.write(`${JSON.stringify(msg)}\n`);
    proc.stdin.flush();
  };
  const reply = async (): Promise<Rpc> => {
    const line = await next();
    if (line === null) throw new Error("dl serve closed stdout");
    return JSON.parse(line) as Rpc;
  };
  return { proc, send, reply };
}

async function oversizeThenServe(stateDir: string, era: "2025-11-25" | "2026-07-28" = "2025-11-25"): Promise<void> {
  const { proc, send, reply } = startServe(stateDir);
  const modern = era === "2026-07-28";
  if (modern) send(modernRequest(1, "server/discover"));
  else
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
  expect((await reply()).id).toBe(1);
  if (!modern) send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // 11 MiB in one line, keys in the order the SDK's client writes them (id last).
  const big = "x".repeat(11 * 1024 * 1024);
  const huge = JSON.stringify({
    method: "tools/call",
    params: { name: "delegate_to_local_agent", arguments: { agent_name: "a", task: big } },
    jsonrpc: "2.0",
    id: 2,
  });
  // In pieces, as a pipe delivers it.
  for (let i = 0; i < huge.length; i += 1024 * 1024) {
    proc.stdin.write(huge.slice(i, i + 1024 * 1024));
    await proc.stdin.flush();
  }
  proc.stdin.write("\n");
  proc.stdin.flush();
  const refused = await reply();
  expect(refused.id).toBe(2);
  expect(refused.error?.code).toBe(-32600);
  expect(refused.error?.message).toContain("MiB refused");
  send(modern ? modernRequest(3, "tools/list") : { jsonrpc: "2.0", id: 3, method: "tools/list" });
  const listed = await reply();
  expect(listed.id).toBe(3);
  expect(JSON.stringify(listed.result)).toContain("delegate_to_local_agent");
  expect(proc.exitCode).toBeNull();
  proc.stdin.end();
  expect(await proc.exited).toBe(0);
}

describe("dl serve stdio: an oversize message", () => {
  test("with a fresh state dir: refused with a JSON-RPC error, the next request answered, stdin close exits", async () => {
    await oversizeThenServe(tempDir("fresh-state"));
  }, 30_000);

  test("on 2026-07-28 (server/discover): the same refusal, and the next request answered", async () => {
    await oversizeThenServe(tempDir("modern-state"), "2026-07-28");
  }, 30_000);

  test("with an existing job store: the same, and the server still exits when stdin closes", async () => {
    const dir = tempDir("state");
    JobStore.open(dir).close();
    await oversizeThenServe(dir);
  }, 30_000);

  test("a schema-valid submit_codex can never be oversize: the total task size is bounded", async () => {
    const { proc, send, reply } = startServe(tempDir("state"));
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    await reply();
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // 60 tasks x 110 KB fit in one message as ASCII, but exceed what one call may carry.
    const tasks = Array.from({ length: 60 }, () => ({ task: "y".repeat(110_000), workdir: "/nonexistent" }));
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "submit_codex", arguments: { tasks } } });
    const r = await reply();
    expect(r.id).toBe(2);
    expect(JSON.stringify(r)).toContain("one call may carry");
    proc.stdin.end();
    expect(await proc.exited).toBe(0);
  }, 30_000);
});
