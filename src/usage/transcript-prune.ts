import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { DELEGATIONS_PROVIDER } from "../providers.ts";
import type { JobStateDir } from "../sys/paths.ts";
import { delegationsDir } from "./transcript-path.ts";

/**
 * `dl reap`: delegation transcripts older than the retention period go, as finished jobs
 * (and their folders, with their transcripts) do. Returns how many (or would).
 */
export function pruneDelegationTranscripts(stores: readonly JobStateDir[], before: number, dryRun: boolean): number {
  let n = 0;
  for (const s of stores) {
    if (s.provider !== DELEGATIONS_PROVIDER) continue;
    const dir = delegationsDir(s.stateDir);
    let names: string[];
    try {
      names = readdirSync(dir).filter((x) => x.endsWith(".jsonl"));
    } catch {
      continue;
    }
    for (const name of names) {
      const file = join(dir, name);
      try {
        const st = statSync(file);
        if (!st.isFile() || st.mtimeMs >= before) continue;
        if (!dryRun) rmSync(file, { force: true });
        n++;
      } catch {
        // gone meanwhile
      }
    }
  }
  return n;
}
