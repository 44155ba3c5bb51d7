/**
 * Child processes, always in their own session and process group: killing `-pgid` then
 * reaches every grandchild a CLI or a shell command forks, and a signal aimed at the child
 * never hits our own group. Split by concern:
 *   process-spawn.ts  start a group and capture its output
 *   process-group.ts  signal a group, tell whether it lives, terminate one or all
 *   process-run.ts    run a command to completion (timeout, abort, reap leftovers)
 *   group-registry.ts the groups started and not yet seen gone (for shutdown)
 * This file is the module the rest of dl imports.
 */

export {
  groupAlive,
  killAllGroupsNow,
  killGroup,
  terminateAllGroups,
  terminateGroup,
} from "./process-group.ts";
export { type RunOptions, type RunResult, runGroup } from "./process-run.ts";
export {
  type GroupChild,
  type StreamName,
  spawnGroup,
} from "./process-spawn.ts";
