import type { CallToolResult } from "@modelcontextprotocol/server";
import { delegationContext } from "../../dispatch/delegation-context.ts";
import {
  type DelegationResult,
  type PreparedDelegation,
  prepareDelegation,
  runPrepared,
} from "../../dispatch/run-delegation.ts";
import { DlError } from "../../errors.ts";
import type { ServerDeps } from "../../services.ts";
import { boundResult } from "../result-spill.ts";
import type { ToolCall } from "../tool-table.ts";
import { batchResult } from "./batch-result.ts";
import { type DelegationArgs, normalizeTurns } from "./delegation-schema.ts";

/**
 * delegate_batch run in place: every task checked first, then all run at once. Imported
 * on the tool's first call (see delegation-run.ts); the caller has checked the batch cap.
 */
export async function runBatch(tasks: DelegationArgs[], deps: ServerDeps, call: ToolCall): Promise<CallToolResult> {
  const started = performance.now();
  const prepared = await prepareAll(tasks, deps);
  const cacheDir = deps.config.paths.cacheDir;
  const results = await Promise.all((await runAll(prepared, deps, call)).map((r) => boundResult(r, cacheDir)));
  return batchResult(results, performance.now() - started);
}

/** All-or-nothing validation: a bad task must not leave the others half-started. */
async function prepareAll(tasks: DelegationArgs[], deps: ServerDeps): Promise<PreparedDelegation[]> {
  const prepared: PreparedDelegation[] = [];
  for (const [i, t] of tasks.entries()) {
    try {
      prepared.push(
        await prepareDelegation({ ...t, max_turns: normalizeTurns(t.max_turns) }, deps.config, deps.settings),
      );
    } catch (e) {
      // Numbered from 1, as the submit_* tools number their tasks. The cause's code and
      // data (a refused workdir's failure_kind and variable) go on to the structured answer.
      if (!(e instanceof DlError)) throw e;
      const why = `task ${i + 1} (${t.agent_name}) is invalid, so no task was started: ${e.message}`;
      throw new DlError(e.code, why, { ...e.data, task: i + 1 });
    }
  }
  return prepared;
}

/** Runs every task at once; results keep the input order, progress counts finished tasks. */
async function runAll(prepared: PreparedDelegation[], deps: ServerDeps, call: ToolCall): Promise<DelegationResult[]> {
  const progress = call.progress;
  const total = prepared.length;
  const done = new Array<boolean>(total).fill(false);
  const finished = () => done.filter(Boolean).length;
  const results = await Promise.all(
    prepared.map(async (p, i) => {
      const r = await runPrepared(
        p,
        delegationContext(deps, {
          signal: call.signal,
          onProgress: (_turn, _max, message) => progress(finished(), total, `task ${i + 1}: ${message}`),
          kind: "delegate_batch",
        }),
      );
      done[i] = true;
      progress(finished(), total, `task ${i + 1} finished (${r.success ? "success" : "failed"})`);
      return r;
    }),
  );
  await progress.settle();
  return results;
}
