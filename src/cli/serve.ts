import { existsSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Server } from "@modelcontextprotocol/server";
import { type StdioServerHandle, serveStdio } from "@modelcontextprotocol/server/stdio";
import { defineCommand } from "citty";
import type { Config } from "../config.ts";
import { pruneIdlePools } from "../dispatch/prune.ts";
import { recordServerCache, sharedSettings } from "../dispatch/server-caches.ts";
import { describeError } from "../errors.ts";
import { registerStores } from "../jobs/shell/store-registry.ts";
import { log } from "../log.ts";
import { forwardLogsTo } from "../mcp/log-forward.ts";
import { MAX_MESSAGE_BYTES } from "../mcp/result-limits.ts";
import { serverFactory } from "../mcp/server.ts";
import { CappedStdioTransport } from "../mcp/stdio-transport.ts";
import { defaultDeps, jobServiceAllowed, type ServerDeps, stateDirOf } from "../services.ts";
import { DB_FILE } from "../store/types.ts";
import { hardenProcess } from "../sys/hardening.ts";
import { jobStateDirs } from "../sys/paths.ts";
import { killAllGroupsNow, terminateAllGroups } from "../sys/process.ts";
import { selfArgv, typedCommand } from "../sys/self-command.ts";
import { VERSION } from "../version.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { redactStdio } from "./redacted-stdio.ts";

/** What run_bash commands and jobs get between SIGTERM and SIGKILL when the server stops. */
const STOP_GRACE_MS = 2_000;
/** How long stopping jobs and closing the transport may take before we move on. */
const STOP_STEPS_MS = 4_000;
/** After this, the server exits whatever is still pending (SIGKILLing what it started). */
const STOP_DEADLINE_MS = 9_000;
/**
 * A client may write its requests and close stdin at once (a script piping into dl
 * serve): what it asked is answered first, for as long as this, before tool calls still
 * running are stopped.
 */
const ANSWER_GRACE_MS = 2_000;

/** Resolves when p settles or after ms, whichever comes first; never rejects. */
async function bounded(p: Promise<unknown>, ms: number): Promise<void> {
  const timer = new AbortController();
  const expiry = sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined);
  try {
    await Promise.race([p.then(() => undefined), expiry]);
  } finally {
    // The timer must not hold the event loop open once p has settled.
    timer.abort();
  }
}

const def = defineCommand({
  meta: {
    name: "serve",
    description: "Run the MCP server on stdio (for claude mcp add); --check tests start-up in a terminal",
  },
  args: {
    check: {
      type: "boolean",
      default: false,
      description: "Run the start-up checks, print what would stop the server, and exit (0 ok, 1 a problem)",
    },
  },
  async run({ args }) {
    // First, before anything reads a secret: no same-user process may read our environ.
    hardenProcess();
    const config = configOrExit();
    if (args.check) {
      const { serveChecks, renderChecks } = await import("./serve-check.ts");
      const lines = await serveChecks(config);
      redactStdio();
      process.stdout.write(renderChecks(lines, typedCommand(config.selfCommand)));
      process.exitCode = lines.some((l) => l.level === "fail") ? EXIT.failure : EXIT.ok;
      return;
    }
    // Every job is run by a supervisor of its own, so it outlives this server and its window.
    const deps = defaultDeps(config, VERSION, undefined, {
      supervisorCommand: { self: selfArgv(), env: config.supervisorEnv, cwd: process.cwd() },
      dieWithOrigin: config.jobs.dieWithServer,
    });
    // Not the SDK's StdioServerTransport: an oversize message closes it, and it drops the
    // requests still running when stdin ends. serveStdio runs both protocol eras over it.
    const transport = new CappedStdioTransport(MAX_MESSAGE_BYTES);
    let handle: StdioServerHandle | undefined;

    let closing = false;
    const running: Running = { transport, deps, handle: () => handle };
    const shutdown = (why: string) => {
      if (closing) return;
      closing = true;
      void stopServing(why, running);
    };
    process.on("SIGTERM", () => void shutdown("SIGTERM"));
    process.on("SIGINT", () => void shutdown("SIGINT"));
    // A closed terminal sends SIGHUP; unhandled, it would kill us with no cleanup at all.
    process.on("SIGHUP", () => void shutdown("SIGHUP"));
    // The client owns our stdin: when it goes away, so do we.
    transport.onend = (why) => void shutdown(why);

    handle = serveBothEras(deps, transport);
    log.debug(`dl serve ${VERSION} ready on stdio`);
    // The watch command we hand back runs in the host's shell, without our settings.
    const unrecorded = registerStores(config.paths.storesRegistryDir, jobStateDirs(config.paths));
    if (unrecorded) log.warn(`dl serve: could not record its job stores for dl wait/jobs/status: ${unrecorded}`);
    const cacheUnrecorded = recordServerCache(
      config.paths.serversRegistryDir,
      config.paths.cacheDir,
      sharedSettings(config),
    );
    if (cacheUnrecorded) log.warn(`dl serve: could not record its cache dir for dl status: ${cacheUnrecorded}`);
    startRecordedJobServices(config, deps);
    void import("./serve-windows.ts").then((m) => m.sayClosedWindows(config));
    // Pool folders of models nobody used for an hour (each model name makes one) go away.
    pruneIdlePools(config.paths.slotsDir);
  },
});

/**
 * Serves both protocol eras on dl's transport: serveStdio answers a 2026-07-28
 * `server/discover` or a 2025-11-25 `initialize`, with one instance from the factory.
 * dl's log lines go to whichever instance serves the connection.
 */
function serveBothEras(deps: ServerDeps, transport: CappedStdioTransport): StdioServerHandle {
  let current: Server | undefined;
  const factory = serverFactory(deps, (s) => {
    current = s;
  });
  const handle = serveStdio(factory, { transport, onerror: (e) => log.debug(`dl serve: ${describeError(e)}`) });
  forwardLogsTo(() => current);
  return handle;
}

/** What a running `dl serve` stops on its way out. */
type Running = {
  transport: CappedStdioTransport;
  deps: ServerDeps;
  /** The server, once it answers. */
  handle: () => StdioServerHandle | undefined;
};

/**
 * How `dl serve` leaves (stdin closed, SIGTERM, SIGINT, SIGHUP): requests already read
 * are answered, job services stop with their running jobs recorded, the server closes,
 * then every process group it started ends. Whatever hangs, it exits STOP_DEADLINE_MS
 * later, its groups killed.
 */
async function stopServing(why: string, running: Running): Promise<void> {
  log.debug(`dl serve stopping: ${why}`);
  // Whatever hangs below, the server still leaves, and takes its children along.
  setTimeout(() => {
    const n = killAllGroupsNow();
    log.warn(`dl serve: stopping took over ${STOP_DEADLINE_MS} ms; exiting now (${n} process group(s) killed)`);
    process.exit(EXIT.failure);
  }, STOP_DEADLINE_MS);
  try {
    if (why === "stdin closed") await bounded(running.transport.answered(), ANSWER_GRACE_MS);
    // Jobs run by supervisors go on (queued ones are handed to supervisors of their own;
    // with DELEGATE_JOBS_DIE_WITH_SERVER they stop instead). Closing the server aborts
    // running tool calls, whose commands get SIGTERM.
    const steps = (async () => {
      await running.deps.stopJobs();
      await running.handle()?.close();
    })();
    await bounded(
      steps.catch((e: unknown) => log.error(`dl serve: error while stopping: ${describeError(e)}`)),
      STOP_STEPS_MS,
    );
    // Children run in their own sessions, so none dies with us by itself: end every
    // group we started and wait until they are gone (SIGKILL for what traps SIGTERM).
    const r = await terminateAllGroups(STOP_GRACE_MS, 1_000);
    if (r.killed) log.debug(`dl serve: ${r.killed} of ${r.signalled} process group(s) needed SIGKILL`);
    if (r.survivors.length) log.warn(`dl serve: process group(s) ${r.survivors.join(", ")} survived SIGKILL`);
  } catch (e) {
    log.error(`dl serve: error while stopping: ${describeError(e)}`);
  } finally {
    process.exit(EXIT.ok);
  }
}

export const serveCommand: DlCommand = {
  def,
  ownSignals: true,
  examples: ["claude mcp add delegate-local --scope user -- /absolute/path/to/dl serve", "dl serve --check"],
};

/**
 * Once answering is possible: a provider whose jobs were ever recorded here gets its job
 * service now, so jobs of servers that died are reaped at start, not on first use. A
 * failure here fails that provider's tools closed. Gemini only behind its gate.
 */
function startRecordedJobServices(config: Config, deps: ServerDeps): void {
  const recorded = (dir: string) => existsSync(join(dir, DB_FILE));
  for (const m of deps.providers) {
    if (!recorded(stateDirOf(config, m)) || !jobServiceAllowed(config, m)) continue;
    deps.jobService(m).catch((e: unknown) => log.warn(`${m.facts.name} jobs unavailable: ${describeError(e)}`));
  }
}
