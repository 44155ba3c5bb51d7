import type { JobRow } from "../store/types.ts";

/**
 * Jobs belong to their project: a caller may cancel jobs of its own project (the key the
 * per-project caps use: the canonical git common dir), or any job whose server is dead;
 * never a live server's job of another project. Returns why not, or null when allowed.
 */
export function cancelRefusal(
  row: Pick<JobRow, "id" | "project" | "owner_pid">,
  callerProject: string,
  ownerAlive: boolean,
): string | null {
  if (!ownerAlive || row.project === callerProject) return null;
  return `job ${row.id} belongs to another project (${row.project}, server pid ${row.owner_pid}); cancel it from that project's session or folder`;
}
