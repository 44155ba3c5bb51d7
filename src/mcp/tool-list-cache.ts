import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/server";
import { describeError } from "../errors.ts";
import { log } from "../log.ts";
import { isCompiledDl } from "../sys/self-command.ts";

/**
 * The tools/list answer kept on disk between `dl serve` starts. Making it builds every
 * listed tool's zod schemas and converts them to JSON Schema: about 5 MB resident and
 * tens of ms of a server every host session starts (bench/startup). The answer depends
 * only on this binary and the settings that pick and word the tools, so it is kept
 * under a key made of exactly those: the executable (path, size, mtime), the version,
 * the listed tool names and `parts`. Run from source there is no binary to key on, and
 * nothing is cached. Any problem reading or writing means "no cache", never an error.
 */
export function listCacheFile(cacheDir: string, version: string, parts: readonly string[]): string | null {
  if (!isCompiledDl()) return null;
  try {
    const st = statSync(process.execPath);
    const key = [process.execPath, st.size, st.mtimeMs, version, ...parts].join("\0");
    return join(cacheDir, "tools-list", `${Bun.hash(key).toString(16)}.json`);
  } catch {
    return null;
  }
}

/** The cached list, if it is one and names exactly `names`, in order. */
export function readCachedList(file: string, names: readonly string[]): Tool[] | null {
  try {
    const tools = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (!Array.isArray(tools) || tools.length !== names.length) return null;
    const ok = tools.every(
      (t, i) =>
        typeof t === "object" &&
        t !== null &&
        (t as Tool).name === names[i] &&
        typeof (t as Tool).inputSchema === "object",
    );
    return ok ? (tools as Tool[]) : null;
  } catch {
    return null;
  }
}

/** Writes the list for the next start: private, whole or not at all. */
export function writeCachedList(file: string, tools: readonly Tool[]): void {
  try {
    mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(tools), { mode: 0o600 });
    renameSync(tmp, file);
  } catch (e) {
    log.debug(`tools/list not cached (${describeError(e)})`);
  }
}
