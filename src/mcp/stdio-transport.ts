import { type JSONRPCMessage, parseJSONRPCMessage, type RequestId, type Transport } from "@modelcontextprotocol/server";
import { redactValue } from "../sys/redact.ts";
import { LineReader } from "./line-reader.ts";

/** Where the transport writes: Bun's own sink for stdout (FileSink), or a test's. */
export type LineSink = {
  write(text: string): number | Promise<number>;
  flush(): number | Promise<number>;
};

/** Why the session with the client is over. */
export type EndReason = "stdin closed" | "stdout closed";

/**
 * The MCP stdio transport of `dl serve`: newline-delimited JSON-RPC on stdin/stdout,
 * like the SDK's StdioServerTransport (handed to `serveStdio` as its transport), except that one message over `maxMessageBytes`
 * is answered with a JSON-RPC error (code -32600, the request's id when it can be read)
 * and the server keeps serving. The transport never stops reading on bad input, so the
 * end of stdin always reaches `onend` (dl serve's shutdown), and so does a stdout the
 * client has closed. It counts the requests not yet answered (`answered()`), so a client
 * that writes its requests and closes stdin at once still gets its answers.
 *
 * It reads and writes through Bun's stdin stream and stdout sink, not Node's
 * process.stdin/stdout: those stream objects cost about 6 MB of a server that idles in
 * 50 (bench/startup). The sink queues what the client is slow to read, in order.
 */
export class CappedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The client has gone: stdin reached its end (or failed), or stdout refused a write. Called once. */
  onend?: (why: EndReason) => void;
  private readonly reader: LineReader;
  private started = false;
  private closed = false;
  private ended = false;
  /** Requests read and not yet answered, and who waits for there to be none. */
  private readonly pending = new Set<RequestId>();
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly maxMessageBytes: number,
    private readonly input: ReadableStream<Uint8Array> = Bun.stdin.stream(),
    private readonly output: LineSink = Bun.stdout.writer(),
  ) {
    this.reader = new LineReader(maxMessageBytes);
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("CappedStdioTransport already started");
    this.started = true;
    void this.pump();
  }

  /** Reads stdin to its end, whatever it carries; then `onend`. */
  private async pump(): Promise<void> {
    const stream = this.input.getReader();
    try {
      for (;;) {
        const { value, done } = await stream.read();
        if (done || this.closed) break;
        this.onData(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      }
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    } finally {
      stream.releaseLock();
      this.end("stdin closed");
    }
  }

  private end(why: EndReason): void {
    if (this.ended || this.closed) return;
    this.ended = true;
    this.onend?.(why);
  }

  /** Resolves when every request read so far has been answered (at once if none is open). */
  answered(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private settle(id: RequestId): void {
    if (!this.pending.delete(id) || this.pending.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private readonly onData = (buf: Buffer): void => {
    for (const ev of this.reader.push(buf)) {
      if (ev.kind === "oversize") this.refuse(ev.bytes, requestIdOf(ev.head, ev.tail));
      else if (ev.text.trim() !== "") this.deliver(ev.text);
    }
  };

  private deliver(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      // A request nobody can read still gets an answer, or its sender waits for ever.
      void this.write({ jsonrpc: "2.0", id: null, error: { code: -32700, message: PARSE_ERROR } });
      return;
    }
    const m = jsonRpcMessage(value);
    if (m instanceof Error) {
      this.onerror?.(new Error(`invalid JSON-RPC message: ${m.message.slice(0, 200)}`));
      const answer = invalidRequestAnswer(value);
      if (answer) void this.write(answer);
      return;
    }
    if ("method" in m && "id" in m) this.pending.add(m.id);
    this.onmessage?.(m);
  }

  private refuse(bytes: number, id: RequestId | null): void {
    const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
    const message = `message of ${mib(bytes)} MiB refused: dl serve reads at most ${mib(this.maxMessageBytes)} MiB per JSON-RPC message; send smaller tasks (write long inputs to a file in the workdir and name it in the task)`;
    this.onerror?.(new Error(message));
    // id null is JSON-RPC's answer when the request's id cannot be known.
    void this.write({ jsonrpc: "2.0", id, error: { code: -32600, message } });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.write(message);
    if (("result" in message || "error" in message) && message.id !== undefined) this.settle(message.id);
  }

  /**
   * Resolves once the line is handed to stdout. A write stdout refuses (the client closed
   * it: EPIPE) is reported and ends the session; it is never thrown, nor left unhandled.
   * Every frame out, a result, an error or a notification, is redacted here (sys/redact.ts),
   * its strings before serialization: whatever a tool, a task or a log line carries.
   */
  private async write(message: unknown): Promise<void> {
    try {
      await this.output.write(`${JSON.stringify(redactValue(message))}\n`);
      await this.output.flush();
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      this.end("stdout closed");
    }
  }
}

/** The message, or why it is not one (the SDK's own check of a JSON-RPC message). */
function jsonRpcMessage(value: unknown): JSONRPCMessage | Error {
  try {
    return parseJSONRPCMessage(value);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

const PARSE_ERROR = "parse error: the line is not valid JSON; send one JSON-RPC 2.0 message (a JSON object) per line";

/**
 * The answer to valid JSON that is not a valid JSON-RPC message, or undefined when none
 * may be sent: a notification or a client's reply is never answered. A request whose
 * `params` is not an object (e.g. null) used to be dropped without a word, and its caller
 * waited for ever (found by test/reliability/fuzz.test.ts).
 */
function invalidRequestAnswer(value: unknown): unknown {
  const obj =
    value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (obj && ("result" in obj || "error" in obj) && !("method" in obj)) return undefined;
  const id = obj && (typeof obj.id === "string" || typeof obj.id === "number") ? obj.id : null;
  if (obj && id === null && typeof obj.method === "string") return undefined; // a notification
  const method = obj && typeof obj.method === "string" ? ` ${JSON.stringify(obj.method.slice(0, 80))}` : "";
  const message = !obj
    ? 'invalid request: a message must be a JSON object (batches are not supported), e.g. {"jsonrpc":"2.0","id":1,"method":"ping"}'
    : `invalid request${method}: expected jsonrpc "2.0", a string method, an id that is a string or a number, and params (when given) an object`;
  return { jsonrpc: "2.0", id, error: { code: -32600, message } };
}

/**
 * The id of a request too large to parse, from its first and last bytes: clients put it
 * first (`{"jsonrpc":"2.0","id":7,…`) or last (the SDK: `…,"jsonrpc":"2.0","id":7}`).
 */
function requestIdOf(head: string, tail: string): RequestId | null {
  const value = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")`;
  const atStart = new RegExp(String.raw`^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*${value}`).exec(head);
  const atEnd = new RegExp(String.raw`,\s*"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  const raw = atStart?.[1] ?? atEnd?.[1];
  if (raw === undefined) return null;
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === "number" || typeof v === "string" ? v : null;
  } catch {
    return null;
  }
}
