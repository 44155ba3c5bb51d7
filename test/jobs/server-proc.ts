import { join } from "node:path";
import type { Subprocess } from "bun";
import { lineReader } from "../helpers/lines.ts";

/** A test/fixture/jobs-server.ts process driven over JSON lines on stdin/stdout. */
export interface ServerProc {
  proc: Subprocess<"pipe", "pipe", "inherit">;
  ready: { pid: number; serverId: string; reaped: { id: string; status: string; killed_pid: number | null }[] };
  call<T = unknown>(req: unknown): Promise<T>;
}

const SERVER = join(import.meta.dir, "../fixture/jobs-server.ts");

/** Starts one server process with `cfg` (see the fixture) and waits for its ready line. */
export async function startServerProc(cfg: Record<string, unknown>): Promise<ServerProc> {
  const proc = Bun.spawn([process.execPath, SERVER, JSON.stringify(cfg)], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const read = lineReader(proc.stdout);
  // A server that dies (a failed start, a crash) must fail the test at once, with its exit
  // code, instead of leaving a call waiting for a line that never comes until the test times out.
  const next = async (): Promise<string> => {
    const line = await read();
    if (line === null)
      throw new Error(
        `server process ${proc.pid} closed its stdout (exit code ${await proc.exited}); see its stderr above`,
      );
    return line;
  };
  const ready = JSON.parse(await next());
  return {
    proc,
    ready,
    async call<T>(req: unknown): Promise<T> {
      proc.stdin.write(`${JSON.stringify(req)}\n`);
      proc.stdin.flush();
      const r = JSON.parse(await next()) as { ok: boolean; result?: T; error?: string };
      if (!r.ok) throw new Error(r.error);
      return r.result as T;
    },
  };
}
