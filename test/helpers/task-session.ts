import { Client, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, type TaskEnabledSession } from "@modelcontextprotocol/ext-tasks/client";
import type { Subprocess } from "bun";
import { requireBinary, testEnv } from "./dl.ts";

/** One JSON-RPC answer as the ext-tasks requester wants it. */
type RawAnswer = { kind: "result"; result: never } | { kind: "error"; error: { code: number; message: string } };

/**
 * The client side of a real `dl serve` over stdio, shared by the SDK's Client and the
 * ext-tasks requester. The Client's wire codec has no 2026-07-28 task shapes, so the
 * requester sends tools/call and tasks/* itself (`raw`), on the same pipe, under ids of
 * its own; answers to those ids go back to it, everything else to the Client.
 */
class SharedStdio implements Transport {
  onmessage?: (m: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (e: Error) => void;
  readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private readonly waiting = new Map<string, (a: RawAnswer) => void>();
  private next = 0;
  stderr = "";

  constructor(
    env: Record<string, string | undefined>,
    cwd?: string,
    /** Every line the server writes on stdout, as it came (a test that searches the frames). */
    private readonly onFrame?: (line: string) => void,
    /** How the server is started instead of dist/dl (`setpriv --reuid … -- <a copy of dl>`: as another user). */
    command: readonly string[] = [requireBinary()],
  ) {
    this.proc = Bun.spawn([...command, "serve"], {
      env: testEnv(env),
      cwd,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
  }

  async start(): Promise<void> {
    void this.read(this.proc.stdout, (line) => this.deliver(line));
    void this.read(this.proc.stderr, (line) => {
      this.stderr += `${line}\n`;
    });
  }

  private async read(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
    let buf = "";
    for await (const chunk of stream) {
      buf += new TextDecoder().decode(chunk);
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    }
    if (stream === this.proc.stdout) this.onclose?.();
  }

  private deliver(line: string): void {
    if (!line.trim()) return;
    this.onFrame?.(line);
    const m = JSON.parse(line) as { id?: unknown; result?: never; error?: { code: number; message: string } };
    const waiter = typeof m.id === "string" ? this.waiting.get(m.id) : undefined;
    if (!waiter) {
      this.onmessage?.(m as JSONRPCMessage);
      return;
    }
    this.waiting.delete(m.id as string);
    waiter(m.error ? { kind: "error", error: m.error } : { kind: "result", result: m.result as never });
  }

  /** Requests written to the server, by method (the benchmark counts round trips). */
  readonly sent = new Map<string, number>();

  async send(m: JSONRPCMessage): Promise<void> {
    const method = (m as { method?: unknown; id?: unknown }).method;
    if (typeof method === "string" && "id" in m) this.sent.set(method, (this.sent.get(method) ?? 0) + 1);
    this.proc.stdin.write(`${JSON.stringify(m)}\n`);
    this.proc.stdin.flush();
  }

  /** The requester's own request on the shared pipe (its `rawDispatch`). */
  /** The id of the last raw request sent (a test that cancels it names it). */
  lastRawId = "";

  raw = (request: unknown): Promise<RawAnswer> => {
    const id = `raw-${++this.next}`;
    this.lastRawId = id;
    const answer = new Promise<RawAnswer>((resolve) => this.waiting.set(id, resolve));
    // A write to a server that died (EPIPE) is a request lost with it, as one written just
    // before it died: its answer never comes. Left unhandled, it failed whichever test ran
    // when the requester's next tasks/get reached a window the test had killed.
    this.send({ ...(request as object), jsonrpc: "2.0", id } as JSONRPCMessage).catch(() => undefined);
    return answer;
  };

  /**
   * Ends stdin, as a host closing its window does, and waits for the server to leave; one
   * still there past its own stop deadline (9 s) plus slack for a loaded machine is
   * killed, so a test file's teardown never waits on it unbounded.
   */
  async close(): Promise<void> {
    this.proc.stdin.end();
    const left = await Promise.race([this.proc.exited.then(() => true), Bun.sleep(CLOSE_WAIT_MS).then(() => false)]);
    if (!left) this.proc.kill("SIGKILL");
    await this.proc.exited;
  }
}

/** How long close() waits for `dl serve` to leave on its own before killing it. */
const CLOSE_WAIT_MS = 20_000;

export type TaskDl = { client: Client; session: TaskEnabledSession; io: SharedStdio; close: () => Promise<void> };

const CLIENT_INFO = { name: "dl-task-test", version: "1.0.0" };

/**
 * `dl serve` on the 2026-07-28 protocol with the ext-tasks requester, which declares the
 * tasks extension on its calls; `client` is the plain SDK Client on the same session.
 * `o.cwd`: the folder (project) the server serves.
 */
export async function connectTaskDl(
  env: Record<string, string | undefined> = {},
  o: { cwd?: string; onFrame?: (line: string) => void; command?: readonly string[] } = {},
): Promise<TaskDl> {
  const io = new SharedStdio(env, o.cwd, o.onFrame, o.command);
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: "auto" } });
  await client.connect(io);
  const session = createTaskSessionFromClient(client, {
    endpointId: "dl-serve",
    rawDispatch: io.raw as never,
    v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo: CLIENT_INFO, clientCapabilities: {} },
  });
  return {
    client,
    session,
    io,
    close: async () => {
      await session.close().catch(() => undefined);
      await client.close().catch(() => undefined);
      await io.close();
    },
  };
}
