/** Helpers for the dispatch tests: settings on disk for workers, worker processes, polling. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DispatchSettings } from "../../src/dispatch/pools.ts";
import { tempDir } from "../helpers/dl.ts";
import { lineReader } from "../helpers/lines.ts";

const root = process.env.DL_TEST_ROOT ?? "/tmp";

/** A fresh pool root and settings with tiny graces (seconds; fractions allowed). */
export function testSettings(over: Partial<DispatchSettings> = {}): DispatchSettings {
  const slotsDir = tempDir("slots", root);
  return {
    slotsDir,
    sizing: { defaultSize: 6, overrides: {} },
    queueGraceS: 5,
    failoverGraceS: 0.05,
    chains: {},
    progressEveryMs: 20,
    maxPollMs: 10,
    ...over,
  };
}

export function writeSettings(s: DispatchSettings): string {
  const file = join(s.slotsDir, "..", `${s.slotsDir.split("/").pop()}.json`);
  writeFileSync(file, JSON.stringify(s));
  return file;
}

export { until } from "../helpers/until.ts";

export type Worker = {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  lines: string[];
  exited: Promise<number>;
};

const WORKER = new URL("../fixture/dispatch-worker.ts", import.meta.url).pathname;
const live: Worker[] = [];

/** Starts test/fixture/dispatch-worker.ts and collects its stdout lines as they arrive. */
export function startWorker(args: string[]): Worker {
  const proc = Bun.spawn([process.execPath, WORKER, ...args], {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: string[] = [];
  const read = lineReader(proc.stdout);
  void (async () => {
    for (let l = await read(); l !== null; l = await read()) lines.push(l);
  })();
  const w: Worker = { proc, lines, exited: proc.exited };
  live.push(w);
  return w;
}

export async function stopWorkers(): Promise<void> {
  for (const w of live.splice(0)) {
    if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill("SIGKILL");
    await w.exited;
  }
}

export async function stderrOf(w: Worker): Promise<string> {
  return new Response(w.proc.stderr).text();
}
