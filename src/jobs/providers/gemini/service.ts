import type { Config } from "../../../config.ts";
import type { JobCaps } from "../../../config-tree.ts";
import { probeJailOnce } from "../../../sandbox/index.ts";
import { protectedDirs } from "../../../sys/paths.ts";
import { workdirGuard } from "../../../sys/workdir-guard.ts";
import type { WorkspaceGuards } from "../../../sys/workspace.ts";
import type { EngineOptions } from "../../engine/engine.ts";
import type { PollView } from "../../engine/poll.ts";
import { JobService, type JobsRole } from "../../service.ts";
import { requireAgyBin } from "./bin.ts";
import { requireGeminiAllowed } from "./gate.ts";
import { type GeminiProviderOptions, geminiProvider } from "./provider.ts";

/**
 * Everything the Gemini MCP tools call: delegate_to_gemini → delegate, submit_gemini →
 * submit, poll_gemini → poll, cancel_gemini → cancel. One instance per server process;
 * every instance on the same state dir shares the queue and the caps.
 */

export interface GeminiServiceOptions extends GeminiProviderOptions {
  /** DELEGATE_GEMINI_ALLOW_DANGER: without it every entry point refuses. */
  allowDanger: boolean;
  caps: Readonly<JobCaps>;
  /** DELEGATE_GEMINI_STATE_DIR (resolved). */
  stateDir: string;
  guards: WorkspaceGuards;
  /** Tests: clocks, engine tick/grace. */
  engine?: Partial<EngineOptions>;
}

/** What delegate_to_gemini returns: the reference's fields, plus why a job failed. */
interface GeminiResult {
  id: string;
  status: string;
  response: string | null;
  truncated?: true;
  conversation_id: string | null;
  usage: unknown;
  duration_s: number | null;
  exit_code: number | null;
  failure_kind: string | null;
  warnings: unknown[];
}

function geminiResult(v: PollView): GeminiResult {
  return {
    id: v.id,
    status: v.status,
    response: v.final_response,
    ...(v.truncated ? { truncated: v.truncated } : {}),
    conversation_id: v.session_id,
    usage: v.usage,
    duration_s: v.elapsed_s,
    exit_code: v.exit_code,
    failure_kind: v.failure_kind,
    warnings: v.warnings,
  };
}

export type GeminiService = JobService<PollView, GeminiResult>;

/** The Gemini service's settings, taken from the one Config. */
export function geminiServiceOptions(c: Config, waitCommand: string): GeminiServiceOptions {
  const platform = process.platform;
  return {
    bin: c.gemini.bin,
    allowDanger: c.gemini.allowDanger,
    // No per-project cap in the reference (caps.maxPerProject is the global cap): one job per workdir and the global cap.
    caps: c.gemini.caps,
    stateDir: c.paths.stateDirs.gemini,
    platform,
    home: c.paths.home,
    stateDirs: protectedDirs(c.paths),
    childEnv: c.childEnv,
    writable: c.jail.writableToolConfig,
    probe: () => probeJailOnce({ platform, path: c.childEnv.PATH ?? "", cwd: "/" }),
    guards: { ...workdirGuard(c.paths), toolEnv: c.childEnv },
    engine: { waitCommand },
  };
}

/** This provider's jobs under the Config (jobs/providers PROVIDERS loads it on first use). */
export function startJobs(
  c: Config,
  waitCommand: string,
  _baseDir?: string,
  role: JobsRole = {},
): Promise<GeminiService> {
  const o = geminiServiceOptions(c, waitCommand);
  return startGeminiService({ ...o, engine: { ...o.engine, ...role } });
}

/**
 * Opens the shared state (fails closed with DlError "storage" when it cannot be
 * written) and reaps dead servers' jobs. A missing agy is not checked here: the tools
 * say what to install when they are used. Every entry point passes the gate first;
 * submit then checks the binary.
 */
export function startGeminiService(o: GeminiServiceOptions): Promise<GeminiService> {
  // A replayed prompt would redo whatever agy already changed: never retried.
  const engine = { provider: geminiProvider(o), stateDir: o.stateDir, caps: o.caps, guards: o.guards, maxRetries: 0 };
  return JobService.start(
    engine,
    {
      gate: () => requireGeminiAllowed(o.allowDanger),
      beforeSubmit: () => {
        requireAgyBin(o.bin, o.childEnv.PATH ?? "");
      },
      answer: geminiResult,
    },
    o.engine,
  );
}
