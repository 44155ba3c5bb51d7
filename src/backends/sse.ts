/**
 * Incremental Server-Sent Events parser.
 *
 * Model streams are many small events, so per-event overhead dominates: the parser works
 * on decoded string chunks with indexOf/charCodeAt (no regex, no per-character loop, no
 * async iterator per event) and hands each complete event to a synchronous callback.
 * Lines end in `\n` or `\r\n` (bare `\r` endings, legal but unused by model servers, are
 * not split). Per the SSE spec an event without its terminating blank line is dropped,
 * which is how a cut stream shows up to the readers.
 */
export type SseHandler = (event: string, data: string) => void;

/**
 * A server that never ends a line or an event must not grow dl without bound: past these
 * sizes the stream is refused (an SseLimitError), not retried.
 */
export const SSE_MAX_LINE_CHARS = 8 * 1024 * 1024;
const SSE_MAX_EVENT_CHARS = 32 * 1024 * 1024;

export class SseLimitError extends Error {
  override readonly name = "SseLimitError";
}

const CH_D = 100; // 'd'
const CH_E = 101; // 'e'
const CH_CR = 13;
const CH_SP = 32;

export class SseParser {
  private rest = "";
  private event = "";
  private data = "";
  private hasData = false;

  constructor(private readonly onEvent: SseHandler) {}

  push(text: string): void {
    // The kept rest holds no newline: searching resumes after it, so a long line costs
    // linear time, not a rescan per chunk.
    const searchFrom = this.rest.length;
    const buf = searchFrom > 0 ? this.rest + text : text;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf("\n", start === 0 ? searchFrom : start);
      if (nl < 0) break;
      let end = nl;
      if (end > start && buf.charCodeAt(end - 1) === CH_CR) end--;
      if (end === start) this.dispatch();
      else this.line(buf, start, end);
      start = nl + 1;
    }
    this.rest = start === 0 ? buf : start < buf.length ? buf.slice(start) : "";
    if (this.rest.length > SSE_MAX_LINE_CHARS)
      throw new SseLimitError(`an SSE line exceeded ${SSE_MAX_LINE_CHARS} characters`);
  }

  /** Discards an unterminated trailing event (see the file comment). */
  end(): void {
    this.rest = "";
    this.event = "";
    this.data = "";
    this.hasData = false;
  }

  private line(buf: string, s: number, e: number): void {
    const c = buf.charCodeAt(s);
    if (c === CH_D && buf.startsWith("data:", s)) {
      let v = s + 5;
      if (buf.charCodeAt(v) === CH_SP) v++;
      const value = buf.slice(v, e);
      if (this.hasData) {
        this.data += `\n${value}`;
        if (this.data.length > SSE_MAX_EVENT_CHARS)
          throw new SseLimitError(`an SSE event exceeded ${SSE_MAX_EVENT_CHARS} characters`);
      } else {
        this.data = value;
        this.hasData = true;
      }
    } else if (c === CH_E && buf.startsWith("event:", s)) {
      let v = s + 6;
      if (buf.charCodeAt(v) === CH_SP) v++;
      this.event = buf.slice(v, e);
    }
    // Comments (":"), id: and retry: carry nothing a model reader needs.
  }

  private dispatch(): void {
    if (this.hasData) {
      const event = this.event;
      const data = this.data;
      this.event = "";
      this.data = "";
      this.hasData = false;
      this.onEvent(event, data);
    } else this.event = "";
  }
}

/**
 * Feed a byte stream through the parser. Handler exceptions propagate (after the body is
 * cancelled), so a reader can stop the stream by throwing.
 */
export async function readSse(body: ReadableStream<Uint8Array>, onEvent: SseHandler): Promise<void> {
  const parser = new SseParser(onEvent);
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.push(decoder.decode(value, { stream: true }));
    }
    parser.push(decoder.decode());
    parser.end();
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
