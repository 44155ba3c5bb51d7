import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { type Config, parseConfig } from "../../src/config.ts";
import type { ProviderModule } from "../../src/jobs/provider-module.ts";
import { PROVIDER_MODULES } from "../../src/jobs/providers/index.ts";
import { serverFactory } from "../../src/mcp/server.ts";
import { defaultDeps, type ServerDeps } from "../../src/services.ts";
import { VERSION } from "../../src/version.ts";
import { testEnv } from "./dl.ts";

/**
 * `dl serve` in this process: the same server factory `dl serve` hands serveStdio,
 * served by serveStdio itself (both protocol eras, one instance per connection) over the
 * SDK's in-memory transport, with the real SDK Client on the other end. For tests of what
 * a tool answers; anything about processes, signals, files or the binary itself talks to
 * `dist/dl serve` over stdio (helpers/dl.ts connectDl).
 */
export type InProcessSession = {
  client: Client;
  config: Config;
  deps: ServerDeps;
  close: () => Promise<void>;
};

export async function connectInProcess(
  env: Record<string, string | undefined> = {},
  o: { providers?: readonly ProviderModule[]; config?: (c: Config) => Config } = {},
): Promise<InProcessSession> {
  const parsed = parseConfig(testEnv(env));
  const config = o.config ? o.config(parsed) : parsed;
  const deps = defaultDeps(config, VERSION, o.providers ?? PROVIDER_MODULES);
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  const handle = serveStdio(serverFactory(deps), { transport: serverEnd });
  const client = new Client({ name: "dl-test", version: "1.0.0" });
  await client.connect(clientEnd);
  return {
    client,
    config,
    deps,
    async close() {
      await client.close().catch(() => undefined);
      await deps.stopJobs();
      await handle.close();
    },
  };
}
