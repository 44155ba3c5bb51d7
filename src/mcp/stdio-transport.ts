import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { LineReader } from "./line-reader.ts";

/**
 * The MCP stdio transport of `dl serve`: newline-delimited JSON-RPC on stdin/stdout,
 * like the SDK's StdioServerTransport, except that one message over `maxMessageBytes`
 * is answered with a JSON-RPC error (code -32600, the request's id when it can be read)
 * and the server keeps serving. The transport never pauses or closes stdin on bad input,
 * so stdin closing always reaches `dl serve`'s shutdown.
 */
export class CappedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly reader: LineReader;
  private started = false;

  constructor(
    private readonly maxMessageBytes: number,
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
  ) {
    this.reader = new LineReader(maxMessageBytes);
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("CappedStdioTransport already started");
    this.started = true;
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onStdinError);
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (const ev of this.reader.push(buf)) {
      if (ev.kind === "oversize") this.refuse(ev.bytes, requestIdOf(ev.head, ev.tail));
      else if (ev.text.trim() !== "") this.deliver(ev.text);
    }
  };

  private readonly onStdinError = (e: Error): void => this.onerror?.(e);

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
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (parsed.success) {
      this.onmessage?.(parsed.data);
      return;
    }
    this.onerror?.(new Error(`invalid JSON-RPC message: ${parsed.error.message.slice(0, 200)}`));
    const answer = invalidRequestAnswer(value);
    if (answer) void this.write(answer);
  }

  private refuse(bytes: number, id: RequestId | null): void {
    const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
    const message = `message of ${mib(bytes)} MiB refused: dl serve reads at most ${mib(this.maxMessageBytes)} MiB per JSON-RPC message; send smaller tasks (write long inputs to a file in the workdir and name it in the task)`;
    this.onerror?.(new Error(message));
    // id null is JSON-RPC's answer when the request's id cannot be known.
    void this.write({ jsonrpc: "2.0", id, error: { code: -32600, message } });
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onStdinError);
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  private write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once("drain", resolve);
    });
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
