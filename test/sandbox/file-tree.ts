import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "../helpers/dl.ts";

/** A fresh folder (its real path) holding `files` (relative path → text), for the config readers' tests. */
export function tree(files: Record<string, string>, tag = "config-tree"): string {
  const w = realpathSync(tempDir(tag));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(w, p)), { recursive: true });
    writeFileSync(join(w, p), text);
  }
  return w;
}
