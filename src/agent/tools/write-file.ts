import { randomBytes } from "node:crypto";
import { closeSync, constants, fchmodSync, openSync, writeFileSync } from "node:fs";
import { lstat, mkdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { describeError, isDlError } from "../../errors.ts";
import { confinePath, displayPath } from "./confine.ts";
import { FD_PATHS, fdPath, openDirBelow } from "./dir-walk.ts";
import { type Confinement, openConfined, proveSameFile } from "./open-confined.ts";
import { refusedContent, refusedWrite } from "./protect-write.ts";
import { WRITE_FILE_DEFAULTS, type WriteFileSettings } from "./settings.ts";
import { type AgentTool, defineTool, fail, ok, pathArg } from "./types.ts";

const writeFileInput = z.object({
  path: pathArg(),
  content: z
    .string({ error: "content must be a string (the whole file)" })
    .describe("The complete new content of the file"),
});

export function writeFileTool(settings: WriteFileSettings = WRITE_FILE_DEFAULTS): AgentTool {
  return defineTool({
    name: "write_file",
    description:
      "Create or overwrite a file with the given content (whole file). Missing parent directories are created; the write is atomic.",
    input: writeFileInput,
    async run({ path: given, content }, ctx) {
      const size = Buffer.byteLength(content, "utf8");
      if (size > settings.maxBytes) {
        return fail(
          `write_file: content is ${size} bytes, over the ${settings.maxBytes}-byte limit; split the file or generate it with a script`,
        );
      }
      let abs: string;
      try {
        abs = await confinePath(ctx.workdir, given, ctx.allowEscape);
      } catch (e) {
        return fail(`write_file: ${describeError(e)}`);
      }
      const refused =
        (await refusedWrite(ctx.workdir, abs, settings.protect)) ??
        (await refusedContent(ctx.workdir, abs, content, settings.protect));
      if (refused) return { ...fail(`write_file: ${refused}`), failure_kind: "path_refused" };
      const shown = displayPath(ctx.workdir, abs);
      try {
        await atomicWrite(abs, content, { workdir: ctx.workdir, allowEscape: ctx.allowEscape });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EISDIR") return fail(`write_file: ${shown} is a directory`);
        if (isDlError(e, "path_escape")) return fail(`write_file: ${e.message}`);
        return fail(`write_file: cannot write ${shown} (${describeError(e)})`);
      }
      const lines = content === "" ? 0 : content.split("\n").length - (content.endsWith("\n") ? 1 : 0);
      return ok(`wrote ${size} bytes (${lines} lines) to ${shown}`);
    },
  });
}

/**
 * Temp file in the same directory, then rename: a reader (or a crash) sees the old file
 * or the new one, never half of one. Renaming also replaces a symlink rather than writing
 * through it. An existing file keeps its permission bits (an executable script stays one).
 *
 * Against a directory swapped for a symlink while this runs: on Linux the directory is
 * opened component by component without following links and the temp file is created and
 * renamed through that descriptor (dir-walk.ts), so nothing can land outside. Elsewhere
 * the temp file is created with O_EXCL|O_NOFOLLOW and proved to sit inside the workdir
 * before a byte is written (open-confined.ts), and the renamed file is proved again.
 */
export async function atomicWrite(abs: string, content: string, where: Confinement): Promise<void> {
  const walk = FD_PATHS && !where.allowEscape;
  const dirFd = walk ? openDirBelow(where.workdir, dirname(abs)) : undefined;
  try {
    if (dirFd === undefined) await mkdir(dirname(abs), { recursive: true });
    const dir = dirFd === undefined ? dirname(abs) : fdPath(dirFd);
    await replaceFile(join(dir, basename(abs)), content, walk ? undefined : { ...where, abs });
  } finally {
    if (dirFd !== undefined) closeSync(dirFd);
  }
}

/** Writes `target` by temp file and rename; with `prove`, checks each step stayed inside. */
async function replaceFile(target: string, content: string, prove?: Confinement & { abs: string }): Promise<void> {
  let mode: number | undefined;
  try {
    const st = await lstat(target);
    if (st.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    if (st.isFile()) mode = st.mode & 0o7777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const tmp = join(dirname(target), `.${basename(target)}.dl-${randomBytes(6).toString("hex")}.tmp`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const { fd, st } = prove
    ? openConfined(tmp, flags, prove, mode ?? 0o666)
    : { fd: openSync(tmp, flags, mode ?? 0o666), st: undefined };
  try {
    try {
      writeFileSync(fd, content);
      if (mode !== undefined) fchmodSync(fd, mode);
    } finally {
      closeSync(fd);
    }
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
  if (prove && st) proveSameFile(prove.abs, st, prove.workdir);
}
