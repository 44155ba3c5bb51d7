import type { Subprocess } from "bun";
import { join } from "node:path";

/** A test/fixture/jobs-server.ts process driven over JSON lines on stdin/stdout. */
export interface ServerProc {
  proc: Subprocess<"pipe", "pipe", "inherit">;
  ready: { pid: number; serverId: string; reaped: { id: string; status: string; killed_pid: number | null }[] };
  call<T = unknown>(req: unknown): Promise<T>;
}

const SERVER = join(import.meta.dir, "../fixture/jobs-server.ts");

/** Starts one server process with `cfg` (see the fixture) and waits for its ready line. */
export async function startServerProc(cfg: Record<string, unknown>): Promise<ServerProc> {
  const proc = Bun.spawn([process.execPath, SERVER, JSON.stringify(cfg)], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let buf = "";
  const lines: string[] = [];
  const waiters: ((l: string) => void)[] = [];
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += new TextDecoder().decode(value);
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const l = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const w = waiters.shift();
        if (w) w(l);
        else lines.push(l);
      }
    }
  })();
  const next = () => (lines.length ? Promise.resolve(lines.shift()!) : new Promise<string>((r) => waiters.push(r)));
  const ready = JSON.parse(await next());
  return {
    proc,
    ready,
    async call<T>(req: unknown): Promise<T> {
      proc.stdin.write(JSON.stringify(req) + "\n");
      proc.stdin.flush();
      const r = JSON.parse(await next()) as { ok: boolean; result?: T; error?: string };
      if (!r.ok) throw new Error(r.error);
      return r.result as T;
    },
  };
}
