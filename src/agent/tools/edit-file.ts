import { closeSync, constants } from "node:fs";
import { z } from "zod";
import { describeError, isDlError } from "../../errors.ts";
import { confinePath, displayPath } from "./confine.ts";
import { applyEdit, isCrlfOnly, lineAt, nearestLine, occurrences } from "./edit-match.ts";
import { type Confinement, openConfined } from "./open-confined.ts";
import { refusedContent, refusedWrite } from "./protect-write.ts";
import { looksBinary, readCapped } from "./read-capped.ts";
import { WRITE_FILE_DEFAULTS, type WriteFileSettings } from "./settings.ts";
import { type AgentTool, defineTool, fail, ok, pathArg } from "./types.ts";
import { atomicWrite } from "./write-file.ts";

const editInput = z.object({
  path: pathArg(),
  old_string: z
    .string({ error: "old_string must be a string: the exact text to replace" })
    .describe("The exact text to replace, whitespace included (copy it from read_file, without the line numbers)"),
  new_string: z
    .string({ error: "new_string must be a string: the text to put in its place" })
    .describe("The text to put in its place"),
  replace_all: z
    .preprocess(
      (v) => (v === "true" ? true : v === "false" || v === "" || v === null ? undefined : v),
      z.boolean({ error: "replace_all must be true or false" }).optional(),
    )
    .describe("Replace every occurrence (default: old_string must occur exactly once)"),
});

/** A reason to refuse the edit, already worded for the model. */
class Refusal extends Error {}

/**
 * An exact-text replacement in one file. A local model pays for every output token, and
 * write_file makes it send a whole 3,000-line file back to change one line; this sends
 * the changed lines only, and returns only their line numbers. The file is read and
 * written through the same confined, race-safe open and atomic rename as write_file, so
 * it keeps its mode; its line endings are kept too.
 */
export function editFileTool(settings: WriteFileSettings = WRITE_FILE_DEFAULTS): AgentTool {
  return defineTool({
    name: "edit_file",
    description:
      "Replace exact text in an existing file: old_string must occur exactly once (or pass replace_all). Returns the changed line numbers, not the file. Prefer it to write_file for any change to part of a file.",
    input: editInput,
    async run({ path: given, old_string, new_string, replace_all }, ctx) {
      if (old_string === "")
        return fail("edit_file: old_string is empty; to create a file or replace all of it, use write_file");
      if (old_string === new_string)
        return fail("edit_file: old_string and new_string are the same: nothing would change");
      let abs: string;
      try {
        abs = await confinePath(ctx.workdir, given, ctx.allowEscape);
      } catch (e) {
        return fail(`edit_file: ${describeError(e)}`);
      }
      const refused = await refusedWrite(ctx.workdir, abs, settings.protect);
      if (refused) return { ...fail(`edit_file: ${refused}`), failure_kind: "path_refused" };
      const shown = displayPath(ctx.workdir, abs);
      const where = { workdir: ctx.workdir, allowEscape: ctx.allowEscape };
      try {
        const text = readText(abs, shown, where, settings);
        const change = planEdit(text, shown, { old_string, new_string, replace_all: replace_all === true }, settings);
        const hookKeys = await refusedContent(ctx.workdir, abs, change.text, settings.protect);
        if (hookKeys) return { ...fail(`edit_file: ${hookKeys}`), failure_kind: "path_refused" };
        await atomicWrite(abs, change.text, where);
        const n = change.lines.length;
        return ok(
          `edited ${shown}: ${n} replacement${n === 1 ? "" : "s"}; new text at line${n === 1 && !change.lines[0]!.includes("-") ? "" : "s"} ${listLines(change.lines)}`,
        );
      } catch (e) {
        if (e instanceof Refusal) return fail(e.message);
        if (isDlError(e, "path_escape")) return fail(`edit_file: ${e.message}`);
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return fail(`edit_file: ${shown} does not exist; create it with write_file`);
        return fail(`edit_file: cannot edit ${shown} (${describeError(e)})`);
      }
    },
  });
}

/** The file as text, refused when it is not a regular file, too large, binary or not UTF-8. */
function readText(abs: string, shown: string, where: Confinement, s: WriteFileSettings): string {
  const { fd, st } = openConfined(abs, constants.O_RDONLY | constants.O_NONBLOCK, where);
  let buf: Buffer | null;
  try {
    if (st.isDirectory()) throw new Refusal(`edit_file: ${shown} is a directory`);
    if (!st.isFile()) throw new Refusal(`edit_file: ${shown} is not a regular file; edit_file edits files only`);
    buf = st.size > s.maxBytes ? null : readCapped(fd, s.maxBytes, st.size);
  } finally {
    closeSync(fd);
  }
  if (buf === null)
    throw new Refusal(
      `edit_file: ${shown} is over the ${s.maxBytes}-byte limit; edit it with run_bash (sed) or a script`,
    );
  if (looksBinary(buf)) throw new Refusal(`edit_file: ${shown} looks binary; edit_file edits text files only`);
  const text = buf.toString("utf8");
  // Bytes that are not UTF-8 would come back as U+FFFD: every other byte must stay as it was.
  if (Buffer.byteLength(text, "utf8") !== buf.byteLength || !Buffer.from(text, "utf8").equals(buf)) {
    throw new Refusal(
      `edit_file: ${shown} is not valid UTF-8 text, so it cannot be edited without changing other bytes`,
    );
  }
  return text;
}

type EditArgs = { old_string: string; new_string: string; replace_all: boolean };

/** Where the edit lands and what the file becomes; refused unless the match is exact and unambiguous. */
function planEdit(text: string, shown: string, a: EditArgs, s: WriteFileSettings) {
  let oldS = a.old_string;
  let newS = a.new_string;
  if (isCrlfOnly(text) && !oldS.includes("\r")) {
    oldS = oldS.replace(/\n/g, "\r\n");
    newS = newS.replace(/\r?\n/g, "\r\n");
  }
  const at = occurrences(text, oldS);
  if (at.length === 0) throw new Refusal(notFound(text, shown, a.old_string));
  if (at.length > 1 && !a.replace_all) {
    const lines = at.slice(0, 10).map((i) => String(lineAt(text, i)));
    const more = at.length > 10 ? ", …" : "";
    throw new Refusal(
      `edit_file: old_string matches ${at.length} places in ${shown} (lines ${lines.join(", ")}${more}); include more surrounding lines so it matches one, or pass replace_all: true to change them all`,
    );
  }
  const change = applyEdit(text, at, oldS, newS);
  const size = Buffer.byteLength(change.text, "utf8");
  if (size > s.maxBytes)
    throw new Refusal(`edit_file: the edited file would be ${size} bytes, over the ${s.maxBytes}-byte limit`);
  return change;
}

function notFound(text: string, shown: string, oldS: string): string {
  const near = nearestLine(text, oldS);
  const hint = near
    ? `the most similar line is ${near.line}: ${JSON.stringify(near.text.slice(0, 200))}`
    : "no line is similar to its first line";
  return `edit_file: old_string was not found in ${shown} (0 matches); ${hint}. Copy old_string exactly from read_file's output (without the line numbers), whitespace included`;
}

function listLines(lines: string[]): string {
  return lines.length > 20 ? `${lines.slice(0, 20).join(", ")}, … (${lines.length - 20} more)` : lines.join(", ");
}
