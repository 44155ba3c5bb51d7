/**
 * Splits a byte stream into newline-ended lines with a cap on each line's size.
 *
 * The SDK's stdio reader keeps one buffer for everything unread and, once it passes
 * 10 MiB, throws and closes the transport: the server then either exits 0 silently or
 * sits with stdin paused, deaf and immortal. Here an oversize line is skipped as it
 * streams in (never held whole) and reported once it ends, and reading goes on.
 * Chunks are joined once per line, not once per chunk, so a long line costs linear time.
 */
export type LineEvent =
  | { kind: "line"; text: string }
  /** A line over the cap, dropped: its size, and its first and last bytes (for the request id). */
  | { kind: "oversize"; bytes: number; head: string; tail: string };

const KEEP = 512;

export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Set while the current line is over the cap and being skipped. */
  private skipping: { bytes: number; head: string; tail: Buffer } | undefined;

  constructor(private readonly maxLineBytes: number) {}

  /** Feeds one chunk; returns the lines (and skipped oversize lines) it completed. */
  push(chunk: Buffer): LineEvent[] {
    const out: LineEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      this.take(piece);
      if (nl < 0) return out;
      out.push(this.finishLine());
      start = nl + 1;
    }
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      this.skipping.bytes += piece.length;
      this.skipping.tail = Buffer.concat([this.skipping.tail, piece.subarray(-KEEP)]).subarray(-KEEP);
      return;
    }
    this.chunks.push(piece);
    this.size += piece.length;
    if (this.size > this.maxLineBytes) {
      const all = Buffer.concat(this.chunks);
      this.skipping = {
        bytes: all.length,
        head: all.subarray(0, KEEP).toString("utf8"),
        tail: Buffer.from(all.subarray(-KEEP)),
      };
      this.chunks = [];
      this.size = 0;
    }
  }

  private finishLine(): LineEvent {
    if (this.skipping) {
      const { bytes, head, tail } = this.skipping;
      this.skipping = undefined;
      return { kind: "oversize", bytes, head, tail: tail.toString("utf8") };
    }
    const line = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    this.size = 0;
    return { kind: "line", text: line.toString("utf8").replace(/\r$/, "") };
  }
}
