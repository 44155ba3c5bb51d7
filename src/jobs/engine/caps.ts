/**
 * A provider's job caps, shared by every server on its state dir: jobs running at once in
 * all and per project, jobs that may wait beyond the free slots, and the least gap between
 * two launches. config.ts parses them as one group per provider.
 */
export type JobCaps = { maxConcurrent: number; maxPerProject: number; maxQueue: number; staggerS: number };

/** The caps as `dl status` and the tools show them. */
export type CapsView = { max_concurrent: number; max_per_project: number; max_queue: number; stagger_s: number };

export function capsView(c: Readonly<JobCaps>): CapsView {
  return {
    max_concurrent: c.maxConcurrent,
    max_per_project: c.maxPerProject,
    max_queue: c.maxQueue,
    stagger_s: c.staggerS,
  };
}
