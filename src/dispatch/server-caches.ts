import { readdirSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import type { Config } from "../config.ts";
import { readChildFileSync } from "../sys/child-file.ts";
import { identity, selfIdentity } from "../sys/identity.ts";
import { canonicalPath, isWithin } from "../sys/paths.ts";
import { privateDir, replacePrivate } from "../sys/private-file.ts";
import { redact } from "../sys/redact.ts";

/**
 * The pools are flock'd slot files under one cache dir, so they hold machine-wide only
 * while every dl process uses the same one. A host that sets DELEGATE_CACHE_DIR in its
 * own config gives its servers other pools than the shell's: each `dl serve` records the
 * cache dir it uses (one small file per server, in a registry at the default place), and
 * `dl status` names every live server whose cache dir differs from its own, and shows
 * those pools too.
 */
const ENTRY_MAX_BYTES = 4096;
const Entry = z
  .object({
    pid: z.number().int().positive(),
    start_time: z.string().min(1).max(200),
    cache_dir: z.string().max(4000),
    // The gateway and model it runs with (never a key): a host may set them too (a plugin's options).
    gateway_url: z.string().max(4000).optional(),
    model: z.string().max(400).optional(),
  })
  .strict();
type Entry = z.infer<typeof Entry>;

/** What a server runs with that a shell may not see: its gateway URL and default model. */
export type SharedSettings = { gateway_url: string; model: string };

export function sharedSettings(config: Config): SharedSettings {
  return { gateway_url: config.gateway.localUrl, model: config.backend.model };
}

/** Records this server's cache dir and shared settings, and forgets servers that are gone. Best effort: a failure only costs status its view. */
export function recordServerCache(registryDir: string, cacheDir: string, shared: SharedSettings): string | null {
  try {
    privateDir(registryDir, dirname(registryDir));
    for (const e of readEntries(registryDir)) if (!alive(e.entry)) rmSync(e.file, { force: true });
    const me = selfIdentity();
    const entry: Entry = { pid: me.pid, start_time: me.startTime, cache_dir: cacheDir, ...shared };
    replacePrivate(join(registryDir, `${me.pid}.json`), `${JSON.stringify(entry)}\n`);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

function readEntries(registryDir: string): { file: string; entry: Entry }[] {
  let names: string[];
  try {
    names = readdirSync(registryDir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  return names.sort().flatMap((name) => {
    const file = join(registryDir, name);
    const read = readChildFileSync(file, ENTRY_MAX_BYTES);
    if (!read.ok) return [];
    try {
      const e = Entry.safeParse(JSON.parse(read.text));
      return e.success && isAbsolute(e.data.cache_dir) ? [{ file, entry: e.data }] : [];
    } catch {
      return [];
    }
  });
}

const alive = (e: Entry) => identity(e.pid)?.startTime === e.start_time;

/** A cache dir other than this process's that live servers use, with their pids. */
export type OtherCacheDir = { cache_dir: string; slots_dir: string; server_pids: number[] };

/** Live servers' cache dirs other than `own`, each once (inside the isolation root when there is one). */
export function otherCacheDirs(registryDir: string, own: string, isolationRoot: string | null): OtherCacheDir[] {
  const byDir = new Map<string, number[]>();
  for (const { entry } of readEntries(registryDir)) {
    const dir = canonicalPath(entry.cache_dir);
    if (dir === own || (isolationRoot && !isWithin(dir, isolationRoot)) || !alive(entry)) continue;
    byDir.set(dir, [...(byDir.get(dir) ?? []), entry.pid]);
  }
  return [...byDir].map(([cache_dir, server_pids]) => ({
    cache_dir,
    slots_dir: join(cache_dir, "slots"),
    server_pids,
  }));
}

/** A live server whose gateway or default model differs from `own`'s, with both values. */
export type OtherSetting = { server_pid: number; variable: string; server_value: string; this_value: string };

/**
 * Live servers (inside the isolation root when there is one) that run with another
 * DELEGATE_LOCAL_URL or DELEGATE_LOCAL_MODEL than this process: their host set it (a
 * plugin's options, an MCP config's env), so a shell's dl run would use another gateway.
 */
export function otherSettings(registryDir: string, own: SharedSettings, isolationRoot: string | null): OtherSetting[] {
  const out: OtherSetting[] = [];
  for (const { entry } of readEntries(registryDir)) {
    if ((isolationRoot && !isWithin(canonicalPath(entry.cache_dir), isolationRoot)) || !alive(entry)) continue;
    const pairs = [
      ["DELEGATE_LOCAL_URL", entry.gateway_url, own.gateway_url],
      ["DELEGATE_LOCAL_MODEL", entry.model, own.model],
    ] as const;
    for (const [variable, server, mine] of pairs)
      if (server !== undefined && server !== mine)
        out.push({ server_pid: entry.pid, variable, server_value: redact(server), this_value: redact(mine) });
  }
  return out;
}
