import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { isTerminal } from "../../src/store/types.ts";
import { connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";
import { liveWith, pidAlive } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { rng, seedFrom, sizeFrom } from "./rng.ts";

/**
 * Chaos: 4 `dl serve` processes on one dsh state dir, with the fake launcher
 * (test/fixture/fake-dsh.sh) as the CLI job. Rounds of submits over MCP to random
 * servers, with random SIGKILLs of jobs' supervisors and of servers (restarted) in
 * between; then `dl reap` and
 * `dl wait`. Asserted from the launchers' own log (not from dl's rows): the global and
 * per-project caps were never exceeded (each launcher takes a flock token of each pool,
 * released by the kernel the instant it dies, see chaos-launcher.sh); every submitted id ends terminal; no launcher is
 * alive once its row is terminal; no server, supervisor or launcher is left behind.
 *
 * CI runs DL_CHAOS_ROUNDS=4 (the default); `npm run chaos` runs a long one. DL_CHAOS_SEED
 * replays a run's choices (timing still varies); the seed is printed on failure.
 */
const LAUNCHER = join(import.meta.dir, "chaos-launcher.sh");
/** The witness takes its tokens with flock(1) (util-linux); without it the caps cannot be witnessed. */
const HAVE_FLOCK = Bun.which("flock") !== null;
const SEED = seedFrom("DL_CHAOS_SEED");
const ROUNDS = sizeFrom("DL_CHAOS_ROUNDS", 4);
const SERVERS = 4;
const GLOBAL_CAP = 3;
const PROJECT_CAP = 2;

type Server = { s: DlSession; pid: number; dead: boolean };
/** `out`: the job's out-dir, in the launcher's argv: how it is found on the host (as root it sees its own pid namespace, so `pid` is that namespace's). */
type Event = { kind: "start" | "end" | "over"; id: string; out?: string; pid?: number; which?: string };

const everyServer: Server[] = [];
afterAll(async () => {
  for (const srv of everyServer) await srv.s.close().catch(() => {});
});

function readEvents(file: string): Event[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const parts = l.split(" ");
      if (parts[0] === "over") {
        const id = /\/jobs\/(dsh-[0-9a-f]+)\/out$/.exec(parts[2] ?? "")?.[1] ?? "?";
        return { kind: "over", id, which: parts[1] };
      }
      const [kind, out, pid] = parts;
      const id = /\/jobs\/(dsh-[0-9a-f]+)\/out$/.exec(out ?? "")?.[1] ?? "?";
      return { kind: kind as Event["kind"], id, out, pid: pid ? Number(pid) : undefined };
    });
}

/** The supervisors (the rows' owners) of the jobs running now. */
function supervisorsRunning(stateDir: string): number[] {
  if (!existsSync(join(stateDir, "jobs.sqlite"))) return [];
  const store = JobStore.open(stateDir, { readonly: true });
  try {
    return store
      .listByStatus(["running"])
      .filter((row) => row.owner_pid !== null && row.owner_pid !== row.origin_pid)
      .map((row) => row.owner_pid!);
  } finally {
    store.close();
  }
}

describe("chaos: servers and supervisors killed, servers restarted, under load on one state dir", () => {
  test.skipIf(!HAVE_FLOCK)(
    `seed ${SEED}, ${ROUNDS} rounds`,
    async () => {
      const r = rng(SEED);
      const root = tempDir("chaos");
      const stateDir = join(root, "state");
      const log = join(root, "events.log");
      const modelsFile = join(root, "models.json");
      writeFileSync(
        modelsFile,
        JSON.stringify({ models: { "ds-flash": { model: "deepseek-v4-flash", enabled: true } } }),
      );
      const env = {
        DELEGATE_DSH_LAUNCHER: LAUNCHER,
        DELEGATE_DSH_STATE_DIR: stateDir,
        DELEGATE_DSH_MODELS_FILE: modelsFile,
        DELEGATE_DSH_STAGGER_S: "0.02",
        DELEGATE_DSH_MAX_CONCURRENT: String(GLOBAL_CAP),
        DELEGATE_DSH_MAX_PER_PROJECT: String(PROJECT_CAP),
        DELEGATE_DSH_MAX_QUEUE: "256",
      };
      const trees = [0, 1, 2].flatMap((i) =>
        makeRepo(root, `repo${i}`, 2).trees.map((t) => ({ t, project: `repo${i}` })),
      );
      const tokens = join(root, "tokens");
      const start = async (): Promise<Server> => {
        const s = await connectDl(env);
        const srv = { s, pid: s.transport.pid!, dead: false };
        everyServer.push(srv);
        return srv;
      };
      const live: Server[] = [];
      const ids: string[] = [];
      let kills = 0;
      let supervisorKills = 0;
      /** Every supervisor seen running a job: none may be left once every job has ended. */
      const supervisors = new Set<number>();
      const failMsg = () =>
        `chaos seed ${SEED} (rerun: DL_CHAOS_SEED=${SEED} DL_CHAOS_ROUNDS=${ROUNDS} bun test test/reliability/chaos.test.ts)`;
      try {
        for (let i = 0; i < SERVERS; i++) live.push(await start());
        for (let round = 0; round < ROUNDS; round++) {
          for (let k = 0, n = 2 + r.int(3); k < n; k++) {
            const srv = r.pick(live);
            const tasks = Array.from({ length: 1 + r.int(4) }, () => {
              const mode = r.pick(["ok", "ok", "ok", "fail", "crash", "slow"]);
              const ms = 50 + r.int(500);
              const tree = r.pick(trees);
              const witness = `TOKENS: ${tokens}/global ${GLOBAL_CAP} ${tokens}/${tree.project} ${PROJECT_CAP}`;
              return {
                task: `MODE: ${mode === "slow" ? "ok" : mode}\nMS: ${mode === "slow" ? 1500 : ms}\nEVENTS: ${log}\n${witness}\nchaos`,
                model: "ds-flash",
                workdir: tree.t,
              };
            });
            const res = (await srv.s.client.callTool(
              { name: "submit_dsh", arguments: { tasks } },
              {
                timeout: 60_000,
              },
            )) as { isError?: boolean; content: { text: string }[]; structuredContent?: { jobs: { id: string }[] } };
            expect(res.isError, `${failMsg()}: submit refused: ${res.content[0]?.text}`).toBeFalsy();
            ids.push(...res.structuredContent!.jobs.map((j) => j.id));
            await Bun.sleep(r.int(250)); // chaos timing, not a wait for a condition
          }
          // A job's supervisor dies too (an orphan now is a job whose supervisor died).
          if (r.chance(0.6)) {
            const running = supervisorsRunning(stateDir);
            for (const pid of running) supervisors.add(pid);
            const victim = running.length ? r.pick(running) : null;
            if (victim !== null) {
              process.kill(victim, "SIGKILL");
              supervisorKills++;
              await until(() => !pidAlive(victim), "the killed supervisor to die");
            }
          }
          if (r.chance(0.7)) {
            const victim = live.splice(r.int(live.length), 1)[0]!;
            process.kill(victim.pid, "SIGKILL");
            victim.dead = true;
            kills++;
            await until(() => !pidAlive(victim.pid), "the killed server to die");
            await Bun.sleep(r.int(300));
            live.push(await start());
          }
        }

        // The survivors finish what they own; rows of killed servers are reaped.
        const reap = await runDl(["reap"], env);
        expect(reap.code, `${failMsg()}: dl reap: ${reap.stderr}`).toBe(0);
        const wait = await runDl(["wait", ...ids], env);
        expect([0, 1], `${failMsg()}: dl wait exited ${wait.code}: ${wait.stderr}`).toContain(wait.code);
        expect(wait.stdout.trim().split("\n").length).toBeGreaterThanOrEqual(ids.length);

        const store = JobStore.open(stateDir, { readonly: true });
        const rows = store.getMany(ids);
        store.close();
        expect(rows.length).toBe(ids.length);
        const notEnded = rows.filter((row) => !isTerminal(row.status)).map((row) => `${row.id}:${row.status}`);
        expect(notEnded, `${failMsg()}: ids not terminal`).toEqual([]);

        const evs = readEvents(log);
        const over = evs.filter((e) => e.kind === "over").map((e) => `${e.id} over the ${e.which} cap`);
        const statuses = new Map<string, number>();
        for (const row of rows) statuses.set(row.status, (statuses.get(row.status) ?? 0) + 1);
        console.log(
          `chaos seed ${SEED}: ${ids.length} jobs, ${kills} servers and ${supervisorKills} supervisors killed, ${evs.filter((e) => e.kind === "start").length} launchers, ${over.length} over a cap (${GLOBAL_CAP} global, ${PROJECT_CAP} per project); ${[...statuses].map(([k, v]) => `${k} ${v}`).join(", ")}`,
        );
        expect(over, `${failMsg()}: launchers found every token of a cap taken`).toEqual([]);

        // No launcher outlives its (terminal) row.
        const launchers = evs.filter((e) => e.kind === "start" && e.out).map((e) => e.out!);
        await until(
          () => launchers.every((out) => liveWith(out).length === 0),
          `${failMsg()}: every launcher to be gone`,
          15_000,
        );
        // Supervisors end with their jobs.
        await until(
          () => [...supervisors].every((pid) => !pidAlive(pid)),
          `${failMsg()}: every supervisor to be gone`,
          15_000,
        );
      } catch (e) {
        console.error(failMsg());
        throw e;
      } finally {
        for (const srv of live) await srv.s.close().catch(() => {});
        const servers = everyServer.map((srv) => srv.pid);
        await until(() => servers.every((pid) => !pidAlive(pid)), `${failMsg()}: every server to exit`, 15_000);
      }
    },
    600_000,
  );
});
