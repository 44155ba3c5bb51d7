import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { privateDir } from "../sys/private-file.ts";

/**
 * Where one command's moved-out entries go: a new private folder `<root>/<n>`, the first
 * n not taken. mkdir is atomic, so two commands (of one job, or of two processes sharing
 * the root) that move out the same path never share a folder. `root` is the job's folder's
 * `quarantine/`, or dl's own under the cache dir: never a folder other users can list.
 */
export function freshQuarantine(root: string): string {
  privateDir(root);
  for (let n = 1; ; n++) {
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
