import { requireBinary, testEnv } from "../helpers/dl.ts";
import { lineReader } from "../helpers/lines.ts";

export type RpcMessage = {
  jsonrpc?: unknown;
  id?: unknown;
  result?: { content?: { type: string; text?: string }[]; isError?: boolean; [k: string]: unknown };
  error?: { code: number; message: string; data?: unknown };
  method?: string;
};

/**
 * `dl serve` over raw stdio, as Claude Code drives it: lines are written as given (so a
 * test can send anything), every stdout line is kept, and a reply is awaited by id.
 * A stdout line that is not a JSON-RPC 2.0 object is recorded in `impure`.
 */
export function rawServe(env: Record<string, string | undefined>) {
  const proc = Bun.spawn([requireBinary(), "serve"], {
    env: testEnv(env),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: string[] = [];
  const impure: string[] = [];
  const byId = new Map<string, RpcMessage>();
  const waiters = new Map<string, (m: RpcMessage) => void>();
  let stderr = "";
  const next = lineReader(proc.stdout);
  const pump = (async () => {
    for (;;) {
      const line = await next();
      if (line === null) return;
      lines.push(line);
      let msg: RpcMessage;
      try {
        msg = JSON.parse(line) as RpcMessage;
      } catch {
        impure.push(line.slice(0, 300));
        continue;
      }
      if (!msg || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0") {
        impure.push(line.slice(0, 300));
        continue;
      }
      if (msg.id === undefined || msg.method !== undefined) continue; // a notification or server request
      const key = JSON.stringify(msg.id);
      byId.set(key, msg);
      waiters.get(key)?.(msg);
    }
  })();
  const errPump = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of proc.stderr as unknown as AsyncIterable<Uint8Array>) stderr += dec.decode(chunk);
  })();

  const writeRaw = async (text: string | Uint8Array) => {
    proc.stdin.write(text);
    await proc.stdin.flush();
  };
  const send = (msg: unknown) => writeRaw(`${JSON.stringify(msg)}\n`);

  /** The reply to `id`, or an Error after `ms` (a hang). */
  const reply = (id: unknown, ms: number): Promise<RpcMessage> => {
    const key = JSON.stringify(id);
    const have = byId.get(key);
    if (have) return Promise.resolve(have);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(key);
        reject(new Error(`no reply to id ${key} within ${ms} ms`));
      }, ms);
      waiters.set(key, (m) => {
        clearTimeout(timer);
        waiters.delete(key);
        resolve(m);
      });
    });
  };

  let pingId = 0;
  const ping = async (ms = 10_000): Promise<void> => {
    const id = `ping-${++pingId}`;
    await send({ jsonrpc: "2.0", id, method: "ping" });
    const r = await reply(id, ms);
    if (r.error) throw new Error(`ping answered with an error: ${r.error.message}`);
  };

  const initialize = async () => {
    await send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "reliability", version: "1" } },
    });
    const r = await reply("init", 20_000);
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return r;
  };

  const close = async (): Promise<number> => {
    proc.stdin.end();
    const code = await proc.exited;
    await Promise.all([pump, errPump]);
    return code;
  };

  return { proc, lines, impure, send, writeRaw, reply, ping, initialize, close, stderr: () => stderr };
}

/** The text of a tool result or the message of a JSON-RPC error. */
export function replyText(m: RpcMessage): string {
  if (m.error) return m.error.message;
  return (m.result?.content ?? []).map((c) => c.text ?? "").join("\n");
}

export function isErrorReply(m: RpcMessage): boolean {
  return m.error !== undefined || m.result?.isError === true;
}
