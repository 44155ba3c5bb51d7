import { factsOf } from "../../providers.ts";
import type { JobRow } from "../../store/types.ts";

/*
 * Providers whose running child cannot outlive its server as a run (PROVIDERS'
 * diesWithServer): Gemini's agy always
 * runs in the jail, and on Linux bwrap's --die-with-parent takes the jail down when the
 * server dies (what is left of its group is killed by the next reap). On macOS
 * (sandbox-exec has no such flag) a jailed agy still running is killed by the next reap,
 * and one already gone was cut off before its end could be recorded. Either way the run
 * was interrupted and cannot be resumed, which the reference names `killed_on_restart`,
 * like a child `dl reap` kills. For other providers a child that is gone may have ended
 * on its own, before or after its server: its fate is unknown, so the row is `lost`.
 */

/**
 * How a running job whose owning server is gone reads, in every command (poll, dl wait,
 * dl status, the reaper when no verified child was left to kill): `lost` when dl cannot
 * know its end. (A queued one never ran: it goes to a supervisor, display-state.ts; a
 * reaper that cannot start one records it `lost`.)
 */
export function deadOwnerStatus(row: Pick<JobRow, "provider" | "status">): "killed_on_restart" | "lost" {
  return row.status === "running" && factsOf(row.provider)?.diesWithServer ? "killed_on_restart" : "lost";
}
