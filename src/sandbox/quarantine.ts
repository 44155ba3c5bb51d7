import { lstatSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { privateDir } from "../sys/private-file.ts";

/**
 * Where one command's moved-out entries go: a new private folder `<root>/<n>`, past the
 * highest n there (one readdir, not a mkdir per folder already made). mkdir is atomic,
 * so two commands (of one job, or of two processes sharing the root) that move out the
 * same path never share a folder. `root` is the job's folder's `quarantine/`, or dl's own
 * under the cache dir: never a folder other users can list.
 */
export function freshQuarantine(root: string): string {
  privateDir(root);
  for (let n = highestNumber(root) + 1; ; n++) {
    const dir = join(root, String(n));
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw e;
    }
    privateDir(dir);
    return dir;
  }
}

const NUMBERED = /^[1-9][0-9]{0,15}$/;

function highestNumber(root: string): number {
  let high = 0;
  for (const name of readdirSync(root)) if (NUMBERED.test(name)) high = Math.max(high, Number(name));
  return high;
}

/**
 * `dl reap`: the numbered folders of `root` (dl's cache-dir quarantine) last written
 * before `before` (the job retention, as for finished jobs' folders), removed; a link in
 * their place is removed, never followed. Returns how many (would) go.
 */
export function pruneQuarantine(root: string, before: number, dryRun: boolean): number {
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => NUMBERED.test(n));
  } catch {
    return 0; // none yet
  }
  let n = 0;
  for (const name of names) {
    try {
      const st = lstatSync(join(root, name));
      if (st.mtimeMs >= before) continue;
      if (!dryRun) rmSync(join(root, name), { recursive: true, force: true });
      n++;
    } catch {
      // gone meanwhile, or left for the next reap
    }
  }
  return n;
}
