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

/** The environment dl's own git questions run with in these tests: a fixed PATH, no real HOME. */
export const HOST_ENV = { PATH: "/usr/bin:/bin", HOME: "/nonexistent" };

/** A quarantine for a guard that must move nothing out: any move fails the test. */
export const noMoves = (): string => {
  throw new Error("nothing should be moved");
};
