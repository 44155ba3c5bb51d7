import type { Config } from "../config.ts";

/**
 * What the MCP layer needs from the outside world, injected so tests can swap the clock
 * or the network without patching globals.
 */
export type ServerDeps = {
  config: Config;
  version: string;
  fetch: typeof fetch;
  now: () => number;
};

export function defaultDeps(config: Config, version: string): ServerDeps {
  return { config, version, fetch: globalThis.fetch, now: () => Date.now() };
}
