import { readFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import { defineCommand } from "citty";
import type { Config } from "../config.ts";
import { agentSettingsFromConfig } from "../dispatch/agent-settings.ts";
import { bucketFor } from "../dispatch/buckets.ts";
import { delegationContext } from "../dispatch/delegation-context.ts";
import { providerOverrides, runProviderTarget } from "../dispatch/provider-endpoint.ts";
import { renderResult } from "../dispatch/render-result.ts";
import { prepareDelegation, runPrepared } from "../dispatch/run-delegation.ts";
import { otherCacheDirs, otherSettings, sharedSettings } from "../dispatch/server-caches.ts";
import { DlError } from "../errors.ts";
import { defaultDeps } from "../services.ts";
import type { Surface } from "../surface.ts";
import { hardenProcess } from "../sys/hardening.ts";
import { canonicalPath, isWithin } from "../sys/paths.ts";
import { privateDir, replacePrivate } from "../sys/private-file.ts";
import { terminateAllGroups } from "../sys/process.ts";
import { VERSION } from "../version.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { interruptScope } from "./interrupt.ts";

function parseBound(flag: string, raw: string | undefined, max: number): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new DlError("bad_input", `${flag} ${JSON.stringify(raw)} is invalid: expected an integer from 1 to ${max}`);
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
    replacePrivate(file, JSON.stringify({ ...p, at: Date.now() }));
  } catch {
    // progress only
  }
}

/** --answer-for: an agent job's child speaks to the MCP caller the job answers (tool and field names). */
function readSurface(raw: string | undefined): Surface {
  if (raw === undefined || raw === "cli" || raw === "mcp") return raw ?? "cli";
  throw new DlError("bad_input", `--answer-for ${JSON.stringify(raw.slice(0, 40))} is invalid: expected cli or mcp`);
}

/**
 * --quarantine-dir: an agent job's folder for what the run_bash jail moves out. Absolute,
 * outside the workdir (moved out means out of the delegate's tree), and a folder dl can make private.
 */
function readQuarantineDir(raw: string | undefined, workdir: string): string | undefined {
  if (raw === undefined) return undefined;
  if (!isAbsolute(raw))
    throw new DlError(
      "bad_input",
      `--quarantine-dir ${JSON.stringify(raw.slice(0, 200))} is invalid: expected an absolute path`,
    );
  const dir = canonicalPath(raw);
  if (isWithin(dir, workdir) || isWithin(workdir, dir))
    throw new DlError("bad_input", `--quarantine-dir ${dir} is invalid: it must lie outside the workdir ${workdir}`);
  // Made (private) now, before anything runs: a folder dl cannot make would otherwise be
  // found only when a planted entry has to be moved into it.
  try {
    privateDir(dir);
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message.slice(0, 200) : String(e));
    throw new DlError("bad_input", `--quarantine-dir ${dir} is invalid: dl cannot make it a private folder (${why})`);
  }
  return dir;
}

const say = (line: string) => process.stderr.write(`dl run: ${line}\n`);

/**
 * A live dl serve on another cache dir (a host that set DELEGATE_CACHE_DIR in its own
 * config) holds slots this run's pool does not count: said before the run takes one, so
 * a limit that does not hold is never silent. A server given another gateway or model by
 * its host is named too: this run does not use what that window uses.
 */
function warnOtherServers(config: Config): void {
  const p = config.paths;
  for (const o of otherCacheDirs(p.serversRegistryDir, p.cacheDir, p.isolationRoot))
    say(
      `warning: dl serve (pid ${o.server_pids.join(", ")}) uses the cache dir ${o.cache_dir} and this run ${p.cacheDir}: neither counts the other's pool slots (dl status says how to share one)`,
    );
  for (const o of otherSettings(p.serversRegistryDir, sharedSettings(config), p.isolationRoot))
    say(
      `note: dl serve (pid ${o.server_pid}) runs with ${o.variable}=${o.server_value}, set by its host; this run uses ${o.this_value} (put it in the settings file for both)`,
    );
}

const def = defineCommand({
  meta: { name: "run", description: "Run one agent delegation from the shell (exit 0 only on success)" },
  args: {
    agent: {
      type: "positional",
      description: "agent name (.claude/agents/<name>.md, skills, or the global agents dir)",
      required: true,
    },
    task: { type: "positional", description: "what the agent should do", required: true },
    workdir: {
      type: "string",
      valueHint: "DIR",
      description: "directory the agent works in (default: the current directory)",
    },
    model: {
      type: "string",
      valueHint: "MODEL",
      description: "model alias (default DELEGATE_LOCAL_MODEL, or the coding model for coding agents)",
    },
    "max-turns": { type: "string", valueHint: "N", description: "turn budget, 1-40 (default auto)" },
    "max-tokens": { type: "string", valueHint: "N", description: "output tokens per reply (default per model)" },
    "task-file": {
      type: "string",
      valueHint: "FILE",
      description: "read the task from this file; the task argument must then be '-' (keeps it out of argv)",
    },
    "transcript-file": {
      type: "string",
      valueHint: "FILE",
      description: "record every model turn and tool call in this new file (default: a dg-… transcript for dl logs)",
    },
    "progress-file": {
      type: "string",
      valueHint: "FILE",
      description: "keep the latest progress line (JSON) in this file",
    },
    "continue-from": {
      type: "string",
      valueHint: "ID",
      description: "continue a finished delegation (its result's conversation_id) with this task",
    },
    "quarantine-dir": {
      type: "string",
      valueHint: "DIR",
      description: "keep what the run_bash sandbox moves out of the workdir here (default: dl's cache dir)",
    },
    json: { type: "boolean", description: "print the result as one JSON object", default: false },
    "answer-for": {
      type: "string",
      valueHint: "cli|mcp",
      description: "who reads the result's errors: cli (default) or mcp (an agent job's run, answering an MCP tool)",
    },
  },
  async run({ args }) {
    // Agent commands run as this user: keep dl's own environment (keys) out of their reach.
    hardenProcess();
    const config = configOrExit();
    const surface = readSurface(args["answer-for"]);
    const served = defaultDeps(config, VERSION);
    const prepared = await prepareDelegation(
      {
        agent_name: args.agent,
        task: readTask(args.task, args["task-file"]),
        workdir: args.workdir,
        model: args.model,
        max_turns: parseBound("--max-turns", args["max-turns"], 40),
        max_tokens: parseBound("--max-tokens", args["max-tokens"], 1_000_000),
        continue_from: args["continue-from"],
      },
      config,
      served.settings,
      surface,
    );
    const quarantineRoot = readQuarantineDir(args["quarantine-dir"], prepared.workdir);
    const deps = quarantineRoot ? { ...served, settings: agentSettingsFromConfig(config, { quarantineRoot }) } : served;
    // Say at once what is happening: a full pool or a slow first reply is otherwise silence.
    say(
      `${prepared.agent.name} on ${prepared.model} in ${prepared.workdir}; taking a slot of pool ${bucketFor(prepared.model)}`,
    );
    warnOtherServers(config);
    // A delegate_to_provider job (DELEGATE_RUN_PROVIDER_*): that endpoint, not the gateway.
    const target = runProviderTarget(config.backend.runProvider);
    const endpoint = target ? await providerOverrides(target, config.backend.providerAllowHosts) : {};
    using interrupt = interruptScope();
    const result = await runPrepared(
      prepared,
      delegationContext(deps, {
        ...endpoint,
        signal: interrupt.signal,
        surface,
        onProgress: (turn, max, message) => {
          say(message);
          if (args["progress-file"]) writeProgress(args["progress-file"], { turn, max_turns: max, message });
        },
        onModelCall: (call, model) => {
          if (call === 1) say(`turn 1 started: waiting for ${model}'s first reply`);
        },
        // A job's child records into its job folder; the job's id is what dl logs takes.
        // Its engine records the job's usage from its row; a run from a shell is its own entry.
        ...(args["transcript-file"]
          ? { transcript: { file: args["transcript-file"], logId: null }, kind: null }
          : { kind: "dl_run" }),
      }),
    );
    // Anything an agent command left running in the background ends with the run.
    await terminateAllGroups(2_000, 1_000);
    process.stdout.write(args.json ? `${JSON.stringify(result)}\n` : `${renderResult(result, undefined, "cli")}\n`);
    process.exitCode = result.success ? EXIT.ok : EXIT.failure;
  },
});

export const runCommand: DlCommand = {
  def,
  examples: [
    'dl run coder "add a --verbose flag to the CLI and its test" --workdir ~/src/app',
    'dl run reviewer "review src/auth.ts" --model deepseek-v4-flash --max-turns 10 --json',
    'dl run coder "also update the tests" --continue-from cv-0123456789abcdef0123',
  ],
};
