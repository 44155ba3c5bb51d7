import { setTimeout as sleep } from "node:timers/promises";
import type { ServerContext } from "@modelcontextprotocol/server";
import { log } from "../log.ts";
import { sanitizeLine } from "../sys/sanitize.ts";

/**
 * How long the result waits after the last progress notification. The SDK's client
 * handles a notification one microtask later than a response that arrived in the same
 * read, and forgets the progress token when the response is handled: a last progress
 * line written just before the result was dropped in 5 of 8 runs. A short gap puts them
 * in separate reads.
 */
const SETTLE_MS = 30;

export type ProgressReporter = ((progress: number, total: number | undefined, message: string) => void) & {
  /** Resolves once the last notification is written and the client has had time to read it alone. */
  settle: () => Promise<void>;
};

/**
 * A progress reporter for one tool call: sends `notifications/progress` only when the
 * client asked for them (a progress token), with a counter that only grows, as the spec
 * requires. Failures to notify never fail the call. Tools `await settle()` before they
 * return their result, so the last progress line reaches the client first.
 */
export function progressReporter(ctx: ServerContext): ProgressReporter {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return Object.assign(() => {}, { settle: async () => {} });
  let last = 0;
  let pending: Promise<void> = Promise.resolve();
  let sentAt: number | null = null;
  const report = (progress: number, total: number | undefined, message: string) => {
    const value = Math.max(progress, last + 1e-3);
    last = value;
    const params: { progressToken: string | number; progress: number; total?: number; message: string } = {
      progressToken: token,
      progress: value,
      // Redacted before it is cut: most of a key is no longer one the transport recognizes.
      message: sanitizeLine(message, 300),
    };
    if (total) params.total = total;
    sentAt = performance.now();
    pending = ctx.mcpReq.notify({ method: "notifications/progress", params }).catch((e: unknown) => {
      log.debug(`progress notification failed: ${String(e)}`);
    });
  };
  const settle = async () => {
    await pending;
    if (sentAt === null) return;
    const wait = SETTLE_MS - (performance.now() - sentAt);
    if (wait > 0) await sleep(wait);
  };
  return Object.assign(report, { settle });
}
