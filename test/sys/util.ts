import { spawnGroup, terminateGroup, type GroupChild } from "../../src/sys/process.ts";

/** Environment for bun fixture processes: enough to run, nothing else. */
export const childEnv: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
};

/** Polls until cond() is true; fails with `what` after the deadline. Never a fixed sleep. */
export async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  let step = 2;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(step);
    step = Math.min(step * 2, 25);
  }
}

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
