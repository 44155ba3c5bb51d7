import { DlError } from "../../errors.ts";
import { isTerminal } from "../../store/types.ts";
import type { JobEngine } from "./engine.ts";
import type { PollView } from "./poll.ts";

/**
 * Waits for one job of `engine` to end and returns its poll view: what the blocking
 * delegate_to_* tools do after their submit. An abort (MCP cancel) cancels the job, so
 * nothing runs on after the caller left.
 */
export async function awaitJob(
  engine: JobEngine,
  id: string,
  o: { tool: string; signal?: AbortSignal; pollMs?: number },
): Promise<PollView> {
  const pollMs = o.pollMs ?? 200;
  for (;;) {
    const row = engine.row(id);
    if (!row) throw new DlError("internal", `job ${id} vanished from the store`);
    if (isTerminal(row.status)) return engine.poll([id])[0] as PollView;
    if (o.signal?.aborted) {
      await engine.cancel(id);
      throw new DlError("cancelled", `${o.tool} was cancelled; job ${id} was stopped`, { id });
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, pollMs);
      function done() {
        clearTimeout(t);
        o.signal?.removeEventListener("abort", done);
        resolve();
      }
      o.signal?.addEventListener("abort", done, { once: true });
    });
  }
}
