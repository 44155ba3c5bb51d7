import { randomBytes } from "node:crypto";
import { chmod, mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { describeError } from "../../errors.ts";
import { confinePath, displayPath } from "./confine.ts";
import { type AgentTool, defineTool, fail, ok, pathArg } from "./types.ts";

export type WriteFileSettings = {
  /** Largest content accepted in one call, in bytes (UTF-8). */
  maxBytes: number;
};

export const WRITE_FILE_DEFAULTS: WriteFileSettings = { maxBytes: 5 * 1024 * 1024 };

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
      const shown = displayPath(ctx.workdir, abs);
      try {
        await atomicWrite(abs, content);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EISDIR") return fail(`write_file: ${shown} is a directory`);
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
 */
async function atomicWrite(abs: string, content: string): Promise<void> {
  const dir = dirname(abs);
  await mkdir(dir, { recursive: true });
  let mode: number | undefined;
  try {
    const st = await stat(abs);
    if (st.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    mode = st.mode & 0o7777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const tmp = join(dir, `.${basename(abs)}.dl-${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(tmp, content, { flag: "wx" });
    if (mode !== undefined) await chmod(tmp, mode);
    await rename(tmp, abs);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
}
