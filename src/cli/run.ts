import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { defineCommand } from "citty";
import { delegationContext } from "../dispatch/delegation-context.ts";
import { renderResult } from "../dispatch/render-result.ts";
import { prepareDelegation, runPrepared } from "../dispatch/run-delegation.ts";
import { DlError } from "../errors.ts";
import { defaultDeps } from "../services.ts";
import { hardenProcess } from "../sys/hardening.ts";
import { terminateAllGroups } from "../sys/process.ts";
import { VERSION } from "../version.ts";
import { configOrExit, EXIT } from "./config-or-exit.ts";

function parseTurns(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 40)
    throw new DlError("bad_input", `--max-turns ${JSON.stringify(raw)} is invalid: expected an integer from 1 to 40`);
  return n;
}

function parseMaxTokens(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000)
    throw new DlError(
      "bad_input",
      `--max-tokens ${JSON.stringify(raw)} is invalid: expected an integer from 1 to 1000000`,
    );
  return n;
}

/** The task from argv, or (with --task-file, task '-') from a private file: argv is visible to every local user. */
function readTask(task: string, file: string | undefined): string {
  if (file === undefined) return task;
  if (task !== "-") throw new DlError("bad_input", "with --task-file the task argument must be '-'");
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw new DlError("bad_input", `--task-file ${file} cannot be read (${(e as NodeJS.ErrnoException).code})`);
  }
}

/**
 * The latest progress as one JSON object, replaced whole (write then rename) so a reader
 * (poll_agent) never sees half a line. Progress is advisory: a failed write is ignored.
 */
function writeProgress(file: string, p: { turn: number; max_turns: number; message: string }): void {
  try {
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, JSON.stringify({ ...p, at: Date.now() }), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // progress only
  }
}

export const runCommand = defineCommand({
  meta: { name: "run", description: "Run one agent delegation from the shell (exit 0 only on success)" },
  args: {
    agent: {
      type: "positional",
      description: "agent name (.claude/agents/<name>.md, skills, or the global agents dir)",
      required: true,
    },
    task: { type: "positional", description: "what the agent should do", required: true },
    workdir: { type: "string", description: "directory the agent works in (default: the current directory)" },
    model: {
      type: "string",
      description: "model alias (default DELEGATE_LOCAL_MODEL, or the coding model for coding agents)",
    },
    "max-turns": { type: "string", description: "turn budget, 1-40 (default auto)" },
    "max-tokens": { type: "string", description: "output budget per turn (default 65536, 150000 for reasoning tiers)" },
    "task-file": {
      type: "string",
      description: "read the task from this file; the task argument must then be '-' (keeps it out of argv)",
    },
    "progress-file": { type: "string", description: "keep the latest progress line (JSON) in this file" },
    json: { type: "boolean", description: "print the result as one JSON object", default: false },
  },
  async run({ args }) {
    // Agent commands run as this user: keep dl's own environment (keys) out of their reach.
    hardenProcess();
    const config = configOrExit();
    const deps = defaultDeps(config, VERSION);
    const prepared = await prepareDelegation(
      {
        agent_name: args.agent,
        task: readTask(args.task, args["task-file"]),
        workdir: args.workdir,
        model: args.model,
        max_turns: parseTurns(args["max-turns"]),
        max_tokens: parseMaxTokens(args["max-tokens"]),
      },
      config,
      deps.settings,
    );
    const abort = new AbortController();
    const onSignal = () => abort.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    const result = await runPrepared(
      prepared,
      delegationContext(deps, {
        signal: abort.signal,
        onProgress: (turn, max, message) => {
          process.stderr.write(`dl run: ${message}\n`);
          if (args["progress-file"]) writeProgress(args["progress-file"], { turn, max_turns: max, message });
        },
      }),
    );
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    // Anything an agent command left running in the background ends with the run.
    await terminateAllGroups(2_000, 1_000);
    process.stdout.write(args.json ? `${JSON.stringify(result)}\n` : `${renderResult(result)}\n`);
    process.exitCode = result.success ? EXIT.ok : EXIT.failure;
  },
});
