import type { NewJob } from "../../src/store/types.ts";

/** The smallest queued row a store test inserts: the test provider, a fixed project and workdir. */
export function newJob(id: string, over: Partial<NewJob> = {}): NewJob {
  return {
    id,
    provider: "test",
    project: "p",
    workdir: "/w",
    workspace_root: "/w",
    task: "t",
    created_at: 1,
    ...over,
  };
}
