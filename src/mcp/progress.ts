import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * A progress reporter for one tool call: sends `notifications/progress` only when the
 * client asked for them (a progress token), with a counter that only grows, as the spec
 * requires. Failures to notify never fail the call.
 */
export function progressReporter(
  extra: ToolExtra,
): (progress: number, total: number | undefined, message: string) => void {
  const token = extra._meta?.progressToken;
  if (token === undefined) return () => {};
  let last = 0;
  return (progress, total, message) => {
    const value = Math.max(progress, last + 1e-3);
    last = value;
    const params: { progressToken: string | number; progress: number; total?: number; message: string } = {
      progressToken: token,
      progress: value,
      message: message.slice(0, 300),
    };
    if (total) params.total = total;
    extra.sendNotification({ method: "notifications/progress", params }).catch((e: unknown) => {
      log.debug(`progress notification failed: ${String(e)}`);
    });
  };
}
