import { expect, test } from "bun:test";
import type { ServerContext } from "@modelcontextprotocol/server";
import { progressReporter } from "../../src/mcp/progress.ts";
import { knowSecrets } from "../../src/sys/redact.ts";

/** A tool call's context as the SDK hands it over, keeping what the reporter sends. */
function contextKeeping(sent: { message: string }[]): ServerContext {
  const mcpReq = {
    _meta: { progressToken: "t1" },
    notify: async (n: { params: { message: string } }) => {
      sent.push(n.params);
    },
  };
  return { mcpReq } as unknown as ServerContext;
}

test("a progress message is redacted before it is cut to 300 characters: a key at the cut leaves none of itself", async () => {
  const sent: { message: string }[] = [];
  const report = progressReporter(contextKeeping(sent));
  const held = "held-progress-value-7731-abcdef";
  knowSecrets([held]);
  report(1, 2, `${"z".repeat(280)} ${held}`);
  await report.settle();
  expect(sent).toHaveLength(1);
  expect(sent[0]!.message.length).toBeLessThanOrEqual(300);
  expect(sent[0]!.message).not.toContain(held.slice(0, 12));
});
