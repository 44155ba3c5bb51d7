import { z } from "zod";
import { readChildFileSync } from "../sys/child-file.ts";
import { notOwned } from "../sys/owned.ts";
import { createPrivateAppender, type PrivateAppender } from "../sys/private-file.ts";
import { redact } from "../sys/redact.ts";

/**
 * What a delegation did, step by step, kept after the call returns: one JSON line per
 * model turn (tokens in, cached and out, stop reason, milliseconds) and per tool call
 * (tool, path or command, exit code, bytes in and out, milliseconds). `dl logs <id>`
 * reads it. Bounded (steps and bytes), keys redacted, the file 0600 and appended as the
 * run goes, so `dl logs --follow` shows a running job.
 */
const TranscriptTurn = z.object({
  t: z.literal("turn"),
  n: z.number().int(),
  model: z.string(),
  in: z.number().int(),
  cached: z.number().int(),
  /** Cache writes (Anthropic's cache_creation_input_tokens); absent in transcripts of older dl. */
  written: z.number().int().optional(),
  out: z.number().int(),
  stop: z.string(),
  ms: z.number().int(),
});
const TranscriptTool = z.object({
  t: z.literal("tool"),
  n: z.number().int(),
  tool: z.string(),
  target: z.string(),
  exit: z.number().int().nullable(),
  bytes_in: z.number().int(),
  bytes_out: z.number().int(),
  ms: z.number().int(),
});
const TranscriptEnd = z.object({ t: z.literal("end"), steps: z.number().int(), dropped: z.number().int() });
const Line = z.discriminatedUnion("t", [TranscriptTurn, TranscriptTool, TranscriptEnd]);
export type TranscriptLine = z.infer<typeof Line>;

/** At most this many steps are written; the rest are counted in the end line. */
const MAX_STEPS = 2000;
/** A path or command is cut to this many characters. */
const TARGET_CAP = 300;
/** A transcript file is read up to this size. */
const READ_CAP = 2 * 1024 * 1024;

export type TurnRecord = Omit<z.infer<typeof TranscriptTurn>, "t">;
export type ToolRecord = Omit<z.infer<typeof TranscriptTool>, "t">;

/** Where the loop reports its steps. */
export interface TranscriptSink {
  turn(r: TurnRecord): void;
  tool(r: ToolRecord): void;
  /** Steps recorded so far (turns and tool calls). */
  readonly steps: number;
}

/** A sink that writes nothing and counts (a transcript that could not be opened still counts steps). */
export function countingSink(): TranscriptSink {
  let steps = 0;
  return {
    turn: () => void steps++,
    tool: () => void steps++,
    get steps() {
      return steps;
    },
  };
}

/** The transcript file of one delegation; every field redacted (sys/redact.ts) before it is cut. */
export class TranscriptFile implements TranscriptSink {
  private file: PrivateAppender | null;
  private count = 0;
  private dropped = 0;

  constructor(path: string) {
    // O_EXCL: a file already there (a link someone planted) is never written through.
    this.file = createPrivateAppender(path);
  }

  get steps(): number {
    return this.count;
  }

  turn(r: TurnRecord): void {
    this.write({ t: "turn", ...r, model: this.clean(r.model, 120), stop: this.clean(r.stop, 40) });
  }

  tool(r: ToolRecord): void {
    this.write({ t: "tool", ...r, tool: this.clean(r.tool, 60), target: this.clean(r.target, TARGET_CAP) });
  }

  /** Writes the end line and closes the file. */
  close(): void {
    if (this.file === null) return;
    this.append({ t: "end", steps: this.count, dropped: this.dropped });
    this.file?.close();
    this.file = null;
  }

  private clean(s: string, cap: number): string {
    const flat = redact(s).replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, " ");
    return flat.length > cap ? `${flat.slice(0, cap - 1)}…` : flat;
  }

  private write(line: TranscriptLine): void {
    this.count++;
    if (this.count > MAX_STEPS) {
      this.dropped++;
      return;
    }
    this.append(line);
  }

  private append(line: TranscriptLine): void {
    if (this.file === null) return;
    try {
      this.file.append(`${JSON.stringify(line)}\n`);
    } catch {
      // A full disk loses the rest of the transcript, never the delegation.
      this.file.close();
      this.file = null;
    }
  }
}

/**
 * The lines of a transcript file from byte `from`, through the one bounded, no-follow,
 * non-blocking reader (a job's child could put a FIFO or a link in its place); bad lines
 * are skipped, and a line still being written waits for the next look. Another user's
 * file is never read: null, or with `refuseForeign` (the commands that print it) refused
 * naming it, as sys/owned.ts words it.
 */
export function readTranscript(
  file: string,
  from = 0,
  o: { refuseForeign?: boolean } = {},
): { lines: TranscriptLine[]; next: number } | null {
  const read = readChildFileSync(file, READ_CAP);
  if (!read.ok && read.refusal === "foreign" && o.refuseForeign) throw notOwned(file, { uid: read.uid ?? -1 });
  if (!read.ok) return null;
  const bytes = Buffer.from(read.text, "utf8");
  const rest = bytes.subarray(Math.min(from, bytes.length)).toString("utf8");
  const end = rest.lastIndexOf("\n") + 1;
  const lines = rest
    .slice(0, end)
    .split("\n")
    .flatMap((l) => {
      try {
        const p = Line.safeParse(JSON.parse(l));
        return p.success ? [p.data] : [];
      } catch {
        return [];
      }
    });
  return { lines, next: from + Buffer.byteLength(rest.slice(0, end)) };
}

/** What a run's transcript says it did: the turns' tokens and model, the tools' exits. */
export type TranscriptTotals = {
  turns: number;
  /** The model the last turn named, or null before the first turn. */
  model: string | null;
  usage: { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number };
  steps: number;
  bash_calls: number;
  bash_failures: number;
  last_bash_exit: number | null;
};

/**
 * Sums a transcript: what a run spent and did even when it never printed a result (it was
 * cancelled, timed out, or its supervisor died), so its tokens still reach the ledger.
 */
export function transcriptTotals(lines: readonly TranscriptLine[]): TranscriptTotals {
  const t: TranscriptTotals = {
    turns: 0,
    model: null,
    usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
    steps: 0,
    bash_calls: 0,
    bash_failures: 0,
    last_bash_exit: null,
  };
  for (const l of lines) {
    if (l.t === "end") continue;
    t.steps++;
    if (l.t === "turn") {
      t.turns = Math.max(t.turns, l.n);
      t.model = l.model;
      t.usage.input_tokens += l.in;
      t.usage.cache_read_tokens += l.cached;
      t.usage.cache_write_tokens += l.written ?? 0;
      t.usage.output_tokens += l.out;
    } else if (l.tool === "run_bash") {
      t.bash_calls++;
      t.last_bash_exit = l.exit;
      if (l.exit !== 0) t.bash_failures++;
    }
  }
  return t;
}

const kb = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** One transcript line as `dl logs` prints it. */
export function renderTranscriptLine(l: TranscriptLine): string {
  if (l.t === "turn")
    return `turn ${l.n}  ${l.model}  in ${l.in} (cached ${l.cached})  out ${l.out}  stop ${l.stop}  ${secs(l.ms)}`;
  if (l.t === "tool")
    return `  ${l.tool}  ${l.target || "-"}  exit ${l.exit ?? "-"}  in ${kb(l.bytes_in)}  out ${kb(l.bytes_out)}  ${secs(l.ms)}`;
  return `end: ${l.steps} step(s)${l.dropped ? `, ${l.dropped} not recorded (over ${MAX_STEPS})` : ""}`;
}
