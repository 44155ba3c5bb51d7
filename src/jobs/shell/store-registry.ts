import { createHash } from "node:crypto";
import { closeSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import { isDlError } from "../../errors.ts";
import { PROVIDERS } from "../../providers.ts";
import { storeAccess } from "../../store/access.ts";
import { readChildFileSync } from "../../sys/child-file.ts";
import { notOwned, openOwnedDir } from "../../sys/owned.ts";
import { canonicalPath, isWithin, type JobStateDir, jobStateDirs, type StatePaths } from "../../sys/paths.ts";
import { privateDir, replacePrivate } from "../../sys/private-file.ts";

/**
 * The per-user record of the job stores `dl serve` processes serve. A host's MCP config
 * may move a store (DELEGATE_CODEX_STATE_DIR=…) where a plain shell's `dl wait`, `dl jobs`
 * or `dl status` would never look: each server writes one small file per store here, and
 * those commands read them beside their own settings.
 */

/** An entry is a few hundred bytes; anything bigger was not written by dl. */
const ENTRY_MAX_BYTES = 4096;

const PROVIDER_NAMES = PROVIDERS.map((p) => p.name) as [string, ...string[]];
const Entry = z.object({ provider: z.enum(PROVIDER_NAMES), state_dir: z.string().min(1).max(4000) }).strict();

/** One file per store, named by a hash of its path: serving it again rewrites the same file. */
function entryFile(registryDir: string, stateDir: string): string {
  return join(registryDir, `${createHash("sha256").update(stateDir).digest("hex").slice(0, 20)}.json`);
}

/** Records the stores a server serves. Best effort: a failure only costs the shell's view. */
export function registerStores(registryDir: string, stores: readonly JobStateDir[]): string | null {
  try {
    privateDir(registryDir, dirname(registryDir));
    for (const s of stores)
      replacePrivate(
        entryFile(registryDir, s.stateDir),
        `${JSON.stringify({ provider: s.provider, state_dir: s.stateDir })}\n`,
      );
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** One entry, validated: an absolute, canonical store path inside the isolation root when there is one. */
function parseEntry(text: string, isolationRoot: string | null): JobStateDir | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const e = Entry.safeParse(raw);
  if (!e.success || !isAbsolute(e.data.state_dir)) return null;
  const stateDir = canonicalPath(e.data.state_dir);
  if (isolationRoot && !isWithin(stateDir, isolationRoot)) return null;
  return { provider: e.data.provider, stateDir };
}

/**
 * The entry names of the registry folder, checked as this user's on its opened descriptor
 * (another user's folder is refused: its entries would send dl to stores they planted);
 * none when it is missing or unreadable.
 */
function entryNames(registryDir: string): string[] {
  let fd: number;
  try {
    fd = openOwnedDir(registryDir).fd;
  } catch (e) {
    if (isDlError(e) && e.data.cause === "not_owned") throw e;
    return [];
  }
  try {
    return readdirSync(registryDir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}

/** Every valid entry with its file, in a stable order; an entry of another user is refused, naming it. */
function readEntries(registryDir: string, isolationRoot: string | null): { file: string; entry: JobStateDir }[] {
  return entryNames(registryDir)
    .sort()
    .flatMap((name) => {
      const file = join(registryDir, name);
      // The one bounded, no-follow, non-blocking, owner-checked reader: a FIFO or a link here is skipped.
      const read = readChildFileSync(file, ENTRY_MAX_BYTES);
      if (!read.ok && read.refusal === "foreign") throw notOwned(file, { uid: read.uid ?? -1 });
      const entry = read.ok ? parseEntry(read.text, isolationRoot) : null;
      return entry ? [{ file, entry }] : [];
    });
}

/**
 * Every recorded store whose job database exists, or that this user cannot look into (the
 * commands name those, they are not empty). A server records its stores at start, before
 * any job created them, so a missing database is skipped here, never forgotten.
 */
function registeredStores(registryDir: string, isolationRoot: string | null): JobStateDir[] {
  return readEntries(registryDir, isolationRoot)
    .map((e) => e.entry)
    .filter((s) => storeAccess(s.stateDir).state !== "absent");
}

/** Whether `dir` is gone for sure (ENOENT), not merely out of this user's sight. */
function vanished(dir: string): boolean {
  try {
    lstatSync(dir);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** `dl reap`: forgets stores whose folder is gone altogether (one it cannot see into stays). Returns how many. */
export function forgetVanishedStores(registryDir: string, isolationRoot: string | null, dryRun: boolean): number {
  const gone = readEntries(registryDir, isolationRoot).filter((e) => vanished(e.entry.stateDir));
  if (!dryRun) for (const g of gone) rmSync(g.file, { force: true });
  return gone.length;
}

/**
 * The stores a shell command reads: its own settings' first (their provider's variable is
 * the one an error names), then every store a server recorded, each path once.
 * `withoutDatabase` keeps recorded state dirs that hold no job yet (a delegation's
 * transcript lives there before any job does).
 */
export function knownJobStores(paths: StatePaths, withoutDatabase = false): JobStateDir[] {
  const own = jobStateDirs(paths);
  const seen = new Set(own.map((s) => s.stateDir));
  const recorded = withoutDatabase
    ? readEntries(paths.storesRegistryDir, paths.isolationRoot).map((e) => e.entry)
    : registeredStores(paths.storesRegistryDir, paths.isolationRoot);
  const extra = recorded.filter((s) => {
    if (seen.has(s.stateDir)) return false;
    seen.add(s.stateDir);
    return true;
  });
  return [...own, ...extra];
}
