import { readFile, stat } from "node:fs/promises";
import { describeError, isDlError } from "../../errors.ts";
import { confinePath, displayPath } from "./confine.ts";
import { type AgentTool, fail, intArg, ok } from "./types.ts";

export type ReadFileSettings = {
  /** Text returned per call (~50 KB); the model pages with offset/limit beyond it. */
  maxBytesPerCall: number;
  /** Files larger than this are refused outright (reading them would only burn memory). */
  maxFileBytes: number;
  /** A single line longer than this is cut, so one minified line cannot eat the page. */
  maxLineChars: number;
};

export const READ_FILE_DEFAULTS: ReadFileSettings = {
  maxBytesPerCall: 50_000,
  maxFileBytes: 20 * 1024 * 1024,
  maxLineChars: 2_000,
};

const BINARY_SNIFF = 8_000;

export function readFileTool(settings: ReadFileSettings = READ_FILE_DEFAULTS): AgentTool {
  return {
    spec: {
      name: "read_file",
      description:
        "Read a text file with line numbers. Returns at most about 50 KB per call with a '[lines N-M of TOTAL]' header; pass offset (first line, 1-based) and limit (number of lines) to read a range or continue.",
      input_schema: {
        type: "object",
        properties: {
          path: { type: "string", description: "File path, relative to the working directory" },
          offset: { type: "integer", description: "First line to read, 1-based (default 1)" },
          limit: { type: "integer", description: "How many lines to read (default: as many as fit in one call)" },
        },
        required: ["path"],
      },
    },
    async run(input, ctx) {
      const given = String(input.path ?? "");
      let offset: number;
      let limit: number | undefined;
      try {
        offset = intArg(input.offset, "offset", 1) ?? 1;
        limit = intArg(input.limit, "limit", 1);
      } catch (e) {
        return fail(`read_file: ${(e as Error).message}`);
      }
      let abs: string;
      try {
        abs = await confinePath(ctx.workdir, given, ctx.allowEscape);
      } catch (e) {
        return fail(`read_file: ${describeError(e)}`);
      }
      const shown = displayPath(ctx.workdir, abs);
      let buf: Buffer;
      try {
        const st = await stat(abs);
        if (st.isDirectory()) return fail(`read_file: ${shown} is a directory; list it with run_bash (ls ${shown})`);
        if (st.size > settings.maxFileBytes) {
          return fail(
            `read_file: ${shown} is ${mb(st.size)}, over the ${mb(settings.maxFileBytes)} limit; inspect it with run_bash (head, tail, grep -n, sed -n 'A,Bp')`,
          );
        }
        buf = await readFile(abs);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return fail(`read_file: ${shown} does not exist`);
        return fail(`read_file: cannot read ${shown} (${isDlError(e) ? e.message : describeError(e)})`);
      }
      if (buf.subarray(0, BINARY_SNIFF).includes(0)) {
        return fail(`read_file: ${shown} looks binary (${buf.byteLength} bytes); it cannot be shown as text. Use run_bash (file, xxd | head) if you need to inspect it`);
      }
      return ok(page(buf.toString("utf8"), shown, offset, limit, settings));
    },
  };
}

function mb(n: number): string {
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** Formats lines offset.. as `N<TAB>text`, stopping at `limit` lines or the byte budget. */
export function page(text: string, shown: string, offset: number, limit: number | undefined, s: ReadFileSettings): string {
  if (text.length === 0) return `[empty file] ${shown}`;
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  if (offset > total) return `[${shown} has ${total} lines; offset ${offset} is past the end]`;
  const want = limit === undefined ? total : Math.min(total, offset - 1 + limit);
  const out: string[] = [];
  let bytes = 0;
  let last = offset - 1;
  for (let i = offset - 1; i < want; i++) {
    let line = lines[i] ?? "";
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.length > s.maxLineChars) line = `${line.slice(0, s.maxLineChars)} … [line cut: ${line.length} chars]`;
    const formatted = `${String(i + 1).padStart(6)}\t${line}`;
    // Always return at least one line, or a huge first line would stall pagination.
    if (out.length > 0 && bytes + formatted.length + 1 > s.maxBytesPerCall) break;
    out.push(formatted);
    bytes += formatted.length + 1;
    last = i + 1;
  }
  const header = `[lines ${offset}-${last} of ${total}] ${shown}`;
  const more = last < total ? `\n[${total - last} more lines: call read_file with offset=${last + 1} to continue]` : "";
  return `${header}\n${out.join("\n")}${more}`;
}
