import type { JobCaps } from "../../config-tree.ts";

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
