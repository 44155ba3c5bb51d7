export { until } from "../helpers/until.ts";

import { type GroupChild, spawnGroup, terminateGroup } from "../../src/sys/process.ts";

/** Environment for bun fixture processes: enough to run, nothing else. */
export const childEnv: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
};

const started: GroupChild[] = [];

/** Starts a bun fixture (test/fixture/<name>) in its own group; see stopAll(). */
export function startFixture(name: string, args: string[]): GroupChild {
  const c = spawnGroup({
    argv: [process.execPath, new URL(`../fixture/${name}`, import.meta.url).pathname, ...args],
    cwd: new URL("../..", import.meta.url).pathname,
    env: childEnv,
  });
  started.push(c);
  return c;
}

/** Kills every fixture group a test started (for afterAll/afterEach). */
export async function stopAll(): Promise<void> {
  const all = started.splice(0);
  await Promise.all(all.map((c) => terminateGroup(c.pgid, 200)));
}
