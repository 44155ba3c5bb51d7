import type { Config } from "../../../config.ts";
import { dlReads } from "../../../sys/dl-reads.ts";
import { protectedDirs } from "../../../sys/paths.ts";
import type { PollView } from "../../engine/poll.ts";
import { JobService, type ServiceContext } from "../../service.ts";
import { requireAgyBin } from "./bin.ts";
import { geminiJailProbe } from "./launch.ts";
import { geminiProvider } from "./provider.ts";

/**
 * Everything the Gemini MCP tools call: delegate_to_gemini → delegate, submit_gemini →
 * submit, poll_gemini → poll, cancel_gemini → cancel. One instance per server process;
 * every instance on the same state dir shares the queue and the caps. Started only
 * behind the gate (index.ts refusal: DELEGATE_GEMINI_ALLOW_DANGER).
 */

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
  /** Measured by dl after the run: what it changed in the work tree, what stayed read-only. */
  files_changed?: unknown;
  kept_read_only?: unknown;
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
    ...(v.files_changed ? { files_changed: v.files_changed, kept_read_only: v.kept_read_only } : {}),
  };
}

export type GeminiService = JobService<PollView, GeminiResult>;

/**
 * This provider's jobs under the Config. Opens the shared state (fails closed with
 * DlError "storage" when it cannot be written) and reaps dead servers' jobs. A missing
 * agy is not checked here: the tools say what to install when they are used; submit
 * checks the binary.
 */
export function startJobs(c: Config, ctx: ServiceContext): Promise<GeminiService> {
  const provider = geminiProvider({
    bin: c.gemini.bin,
    platform: process.platform,
    home: c.paths.home,
    stateDirs: protectedDirs(c.paths),
    childEnv: c.childEnv,
    gitAskEnv: c.gitAskEnv,
    writable: c.jail.writableToolConfig,
    dlReads: dlReads(c),
    project: c.callerDir,
    probe: () => geminiJailProbe(c),
  });
  return JobService.start(c, ctx, {
    provider,
    // No per-project cap in the reference (caps.maxPerProject is the global cap): one job per workdir and the global cap.
    caps: c.gemini.caps,
    // A replayed prompt would redo whatever agy already changed: never retried.
    maxRetries: 0,
    beforeSubmit: () => {
      requireAgyBin(c.gemini.bin, c.childEnv.PATH ?? "");
    },
    answer: geminiResult,
  });
}
