import { closeSync, constants, readFile as readFileCb, readSync } from "node:fs";
import { promisify } from "node:util";
import { z } from "zod";
import { describeError, isDlError } from "../../errors.ts";
import { confinePath, displayPath } from "./confine.ts";
import { type Confinement, openConfined } from "./open-confined.ts";
import { READ_FILE_DEFAULTS, type ReadFileSettings } from "./settings.ts";
import { type AgentTool, defineTool, fail, ok, optionalInt, pathArg } from "./types.ts";

const BINARY_SNIFF = 8_000;
/**
 * Regular files up to this size are read with synchronous calls on one descriptor (open,
 * fstat, read, close: ~7 µs against ~55 µs for async stat + readFile); anything larger
 * or not a regular file takes the async path, so a big read never stalls the event loop.
 */
const SYNC_READ_MAX = 1024 * 1024;

const readFileInput = z.object({
  path: pathArg(),
  offset: optionalInt("offset", 1).describe("First line to read, 1-based (default 1)"),
  limit: optionalInt("limit", 1).describe("How many lines to read (default: as many as fit in one call)"),
});

export function readFileTool(settings: ReadFileSettings = READ_FILE_DEFAULTS): AgentTool {
  return defineTool({
    name: "read_file",
    description:
      "Read a text file with line numbers. Returns at most about 50 KB per call with a '[lines N-M of TOTAL]' header; pass offset (first line, 1-based) and limit (number of lines) to read a range or continue.",
    input: readFileInput,
    async run({ path: given, offset = 1, limit }, ctx) {
      let abs: string;
      try {
        abs = await confinePath(ctx.workdir, given, ctx.allowEscape);
      } catch (e) {
        return fail(`read_file: ${describeError(e)}`);
      }
      const shown = displayPath(ctx.workdir, abs);
      let buf: Buffer;
      try {
        buf = await readConfined(abs, shown, { workdir: ctx.workdir, allowEscape: ctx.allowEscape }, settings);
      } catch (e) {
        if (e instanceof Refusal) return fail(e.message);
        if (isDlError(e, "path_escape")) return fail(`read_file: ${e.message}`);
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return fail(`read_file: ${shown} does not exist`);
        return fail(`read_file: cannot read ${shown} (${isDlError(e) ? e.message : describeError(e)})`);
      }
      if (buf.subarray(0, BINARY_SNIFF).includes(0)) {
        return fail(
          `read_file: ${shown} looks binary (${buf.byteLength} bytes); it cannot be shown as text. Use run_bash (file, xxd | head) if you need to inspect it`,
        );
      }
      return ok(page(buf.toString("utf8"), shown, offset, limit, settings));
    },
  });
}

/** A reason to refuse the file, already worded for the model. */
class Refusal extends Error {}

/**
 * The file's bytes through one descriptor, proved to be the confined file (see
 * open-confined.ts), so what is checked is what is read. O_NONBLOCK makes opening a FIFO
 * return at once instead of waiting for a writer; fstat then refuses it. Small files
 * are read with synchronous calls (open, fstat, read, close: ~7 µs against ~55 µs
 * async); larger ones asynchronously, so a big read never stalls the event loop.
 */
async function readConfined(abs: string, shown: string, where: Confinement, s: ReadFileSettings): Promise<Buffer> {
  const { fd, st } = openConfined(abs, constants.O_RDONLY | constants.O_NONBLOCK, where);
  try {
    if (st.isDirectory()) throw new Refusal(`read_file: ${shown} is a directory; list it with run_bash (ls ${shown})`);
    // A FIFO would block forever and a device (/dev/zero) never ends: regular files only.
    if (!st.isFile())
      throw new Refusal(
        `read_file: ${shown} is not a regular file (a pipe, socket or device); read_file reads files only`,
      );
    if (st.size > s.maxFileBytes) {
      throw new Refusal(
        `read_file: ${shown} is ${mb(st.size)}, over the ${mb(s.maxFileBytes)} limit; inspect it with run_bash (head, tail, grep -n, sed -n 'A,Bp')`,
      );
    }
    const quick =
      st.size <= SYNC_READ_MAX ? readSmallSync(fd, st.size, Math.min(SYNC_READ_MAX, s.maxFileBytes)) : undefined;
    const buf = quick ?? (await readFd(fd));
    if (buf.byteLength > s.maxFileBytes)
      throw new Refusal(`read_file: ${shown} grew past the ${mb(s.maxFileBytes)} limit while being read`);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/** Reads to EOF, not to the size fstat gave: a file can change size, and /proc files report 0. */
function readSmallSync(fd: number, size: number, max: number): Buffer | undefined {
  let buf = Buffer.allocUnsafe(size + 1);
  let n = 0;
  for (;;) {
    if (n === buf.length) {
      if (n > max) return undefined; // it grew past the cap: let the async path decide
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, n);
      buf = bigger;
    }
    const got = readSync(fd, buf, n, buf.length - n, n);
    if (got === 0) return buf.subarray(0, n);
    n += got;
  }
}

const readFd = promisify(readFileCb) as (fd: number) => Promise<Buffer>;

function mb(n: number): string {
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** Left padding that right-aligns a line number in 6 columns (padStart was a hot spot). */
const PAD = ["      ", "     ", "    ", "   ", "  ", " "];

/** Formats lines offset.. as `N<TAB>text`, stopping at `limit` lines or the byte budget. */
export function page(
  text: string,
  shown: string,
  offset: number,
  limit: number | undefined,
  s: ReadFileSettings,
): string {
  if (text.length === 0) return `[empty file] ${shown}`;
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  if (offset > total) return `[${shown} has ${total} lines; offset ${offset} is past the end]`;
  const want = limit === undefined ? total : Math.min(total, offset - 1 + limit);
  // Plain concatenation: JSC builds a rope, cheaper than an array of lines and a join.
  let body = "";
  let bytes = 0;
  let last = offset - 1;
  for (let i = offset - 1; i < want; i++) {
    let line = lines[i] ?? "";
    if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1); // a CRLF file's \r
    if (line.length > s.maxLineChars) line = `${line.slice(0, s.maxLineChars)} … [line cut: ${line.length} chars]`;
    const num = String(i + 1);
    const formatted = `${num.length < 6 ? PAD[num.length]! + num : num}\t${line}`;
    // Always return at least one line, or a huge first line would stall pagination.
    if (bytes > 0 && bytes + formatted.length + 1 > s.maxBytesPerCall) break;
    body = bytes > 0 ? `${body}\n${formatted}` : formatted;
    bytes += formatted.length + 1;
    last = i + 1;
  }
  const header = `[lines ${offset}-${last} of ${total}] ${shown}`;
  const more = last < total ? `\n[${total - last} more lines: call read_file with offset=${last + 1} to continue]` : "";
  return `${header}\n${body}${more}`;
}
