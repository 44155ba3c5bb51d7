import { readdirSync } from "node:fs";
import { groupMembers, killPid } from "./proc.ts";
import { until } from "./until.ts";

/**
 * The real Claude Code from npm, run as `claude -p hi` in a process group of its own: with
 * no API reachable it runs its hooks and starts its MCP servers, then retries for a minute
 * or more, so each start is killed as a group once the markers its hooks write answer.
 */
export const CLAUDE = new URL("../../node_modules/.bin/claude", import.meta.url).pathname;

const groups = new Set<number>();

/** `claude -p hi` in `cwd` until `done` holds for the names in `markers`; the sorted names and how long it took. */
export async function claudeUntil(
  cwd: string,
  env: Record<string, string | undefined>,
  markers: string,
  done: (names: string[]) => boolean,
): Promise<{ markers: string[]; ms: number }> {
  const start = performance.now();
  const p = Bun.spawn(["setsid", CLAUDE, "-p", "hi"], {
    cwd,
    env,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  groups.add(p.pid);
  try {
    const names = await until(
      () => (done(readdirSync(markers)) ? readdirSync(markers) : null),
      "claude's markers",
      90_000,
    );
    return { markers: names.sort(), ms: Math.round(performance.now() - start) };
  } finally {
    await stopGroup(p.pid);
    await p.exited;
  }
}

async function stopGroup(pid: number): Promise<void> {
  if (groupMembers(pid).length > 0) killPid(pid, "SIGKILL", true);
  await until(() => groupMembers(pid).length === 0, `claude's group ${pid} to end`);
  groups.delete(pid);
}

/** Kills every claude group still running (a test that failed while one ran). */
export async function stopAllClaude(): Promise<void> {
  for (const pid of [...groups]) await stopGroup(pid);
}
