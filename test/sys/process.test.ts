import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isDlError } from "../../src/errors.ts";
import { groupAlive, killGroup, runGroup, spawnGroup, terminateGroup } from "../../src/sys/process.ts";
import { killPid, pidAlive } from "../helpers/proc.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C" };
const cwd = tmpdir();

function pgidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

// Leader forks a grandchild that ignores SIGTERM (SIG_IGN survives exec), prints its pid,
// then waits. Only SIGKILL to the whole group ends the grandchild.
const STUBBORN = `(trap '' TERM; exec sleep 30) & echo "gc $!"; wait`;

describe("spawnGroup", () => {
  test("child leads a new process group, not ours", async () => {
    const c = spawnGroup({ argv: ["sleep", "5"], cwd, env });
    expect(c.pgid).toBe(c.pid);
    expect(pgidOf(c.pid)).toBe(c.pid);
    expect(pgidOf(c.pid)).not.toBe(pgidOf(process.pid));
    const r = await terminateGroup(c.pgid, 1000);
    expect(r).toEqual({ killed: false, gone: true });
    expect(await c.exited).toEqual({ exitCode: null, signal: "SIGTERM" });
  });

  test("environment is exactly what the caller passes", async () => {
    const r = await runGroup({ argv: ["env"], cwd, env: { PATH: env.PATH, ONLY_THIS: "yes" } });
    const lines = r.stdout.text().trim().split("\n").sort();
    expect(lines).toEqual([`ONLY_THIS=yes`, `PATH=${env.PATH}`]);
  });

  test("true exit codes and signals", async () => {
    const seven = await runGroup({ argv: ["sh", "-c", "echo out; echo err >&2; exit 7"], cwd, env });
    expect(seven.exitCode).toBe(7);
    expect(seven.signal).toBeNull();
    expect(seven.stdout.text()).toBe("out\n");
    expect(seven.stderr.text()).toBe("err\n");
    const killed = await runGroup({ argv: ["sh", "-c", "kill -KILL $$"], cwd, env });
    expect(killed.exitCode).toBeNull();
    expect(killed.signal).toBe("SIGKILL");
  });

  test("caps keep the first bytes, count all, flag truncation; onOutput sees everything", async () => {
    let seen = 0;
    const r = await runGroup({
      argv: ["sh", "-c", "head -c 200000 /dev/zero | tr '\\0' a; printf 'e%.0s' 1 2 3 >&2"],
      cwd,
      env,
      stdoutCap: 1000,
      stderrCap: 2,
      onOutput: (_s, chunk) => {
        seen += chunk.byteLength;
      },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.bytes.byteLength).toBe(1000);
    expect(r.stdout.text()).toBe("a".repeat(1000));
    expect(r.stdout.totalBytes).toBe(200000);
    expect(r.stdout.truncated).toBe(true);
    expect(r.stderr.text()).toBe("ee");
    expect(r.stderr.totalBytes).toBe(3);
    expect(r.stderr.truncated).toBe(true);
    expect(seen).toBe(200003);
    const small = await runGroup({ argv: ["echo", "hi"], cwd, env, stdoutCap: 3 });
    expect(small.stdout.truncated).toBe(false);
  });

  test("a missing program is a not_found DlError naming only the program", () => {
    let err: unknown;
    try {
      spawnGroup({ argv: ["/nonexistent/dl-no-such-tool", "secret-arg"], cwd, env });
    } catch (e) {
      err = e;
    }
    expect(isDlError(err, "not_found")).toBe(true);
    expect(String((err as Error).message)).toContain("dl-no-such-tool");
    expect(String((err as Error).message)).not.toContain("secret-arg");
  });
});

describe("runGroup", () => {
  test("timeout kills the whole group, including a grandchild that ignores SIGTERM", async () => {
    // 2 s: the shell must start and print the grandchild's pid first, even on a loaded machine.
    const r = await runGroup({ argv: ["sh", "-c", STUBBORN], cwd, env, timeoutMs: 2000, graceMs: 200 });
    const gc = Number(/gc (\d+)/.exec(r.stdout.text())?.[1]);
    expect(gc).toBeGreaterThan(1);
    expect(r.timedOut).toBe(true);
    expect(r.aborted).toBe(false);
    expect(r.signal).toBe("SIGTERM"); // the leader obeyed TERM; the grandchild needed KILL
    expect(pidAlive(gc)).toBe(false);
    expect(groupAlive(r.pgid)).toBe(false);
    console.log(`timeout run: ${r.durationMs} ms (timeout 2000 + grace 200)`);
  });

  test("abort kills the group and reports aborted", async () => {
    const ac = new AbortController();
    let gcPid = 0;
    const r = await runGroup({
      argv: ["sh", "-c", STUBBORN],
      cwd,
      env,
      signal: ac.signal,
      graceMs: 100,
      onOutput: (_s, chunk) => {
        const m = /gc (\d+)/.exec(new TextDecoder().decode(chunk));
        if (m) {
          gcPid = Number(m[1]);
          ac.abort();
        }
      },
    });
    expect(r.aborted).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(gcPid).toBeGreaterThan(1);
    expect(pidAlive(gcPid)).toBe(false);
  });

  test("an already-aborted signal starts nothing", async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(runGroup({ argv: ["true"], cwd, env, signal: ac.signal })).rejects.toMatchObject({
      code: "cancelled",
    });
  });

  test("onSpawn gets the child's ids while it runs, and an abort from it stops the group", async () => {
    const ac = new AbortController();
    const seen: { pid: number; pgid: number; alive: boolean }[] = [];
    const r = await runGroup({
      argv: ["sh", "-c", "sleep 30"],
      cwd,
      env,
      signal: ac.signal,
      graceMs: 200,
      onSpawn: (c) => {
        seen.push({ ...c, alive: pidAlive(c.pid) });
        ac.abort();
      },
    });
    expect(seen).toEqual([{ pid: r.pid, pgid: r.pgid, alive: true }]);
    expect(r.aborted).toBe(true);
    expect(groupAlive(r.pgid)).toBe(false);
  });

  test("background jobs left by a finished leader are reaped (unless asked not to)", async () => {
    const r = await runGroup({ argv: ["sh", "-c", "sleep 30 & echo $!"], cwd, env });
    expect(r.exitCode).toBe(0);
    const bg = Number(r.stdout.text().trim());
    expect(pidAlive(bg)).toBe(false);

    const kept = await runGroup({
      argv: ["sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"],
      cwd,
      env,
      reapGroup: false,
    });
    const bg2 = Number(kept.stdout.text().trim());
    expect(pidAlive(bg2)).toBe(true);
    expect(killGroup(kept.pgid, "SIGKILL")).toBe(true);
    expect((await terminateGroup(kept.pgid, 100)).gone).toBe(true);
    expect(pidAlive(bg2)).toBe(false);
  });

  test("a grandchild that escapes the group cannot hang the run: capture stops after drainMs", async () => {
    // setsid moves the grandchild out of the group but it keeps our stdout pipe open. The
    // leader waits until the escape happened (session id == its pid) before it exits.
    const script = `setsid sleep 5 & while [ "$(cut -d' ' -f6 /proc/$!/stat)" != "$!" ]; do :; done; echo "esc $!"`;
    const r = await runGroup({ argv: ["sh", "-c", script], cwd, env, drainMs: 200 });
    const esc = Number(/esc (\d+)/.exec(r.stdout.text())?.[1]);
    expect(r.exitCode).toBe(0);
    expect(pidAlive(esc)).toBe(true); // it escaped, so the group kill did not reach it
    expect(r.durationMs).toBeGreaterThanOrEqual(200);
    expect(r.durationMs).toBeLessThan(2000);
    killPid(esc);
  });
});

describe("killGroup safety", () => {
  test("refuses pgid 0, 1, negatives and our own group", () => {
    for (const bad of [0, 1, -5, 1.5, process.pid, pgidOf(process.pid)]) {
      expect(() => killGroup(bad, 0)).toThrow(/refusing/);
    }
  });
  test("a vanished group reports false", async () => {
    const c = spawnGroup({ argv: ["true"], cwd, env });
    await c.exited;
    expect(await terminateGroup(c.pgid, 100)).toEqual({ killed: false, gone: true });
  });
});
