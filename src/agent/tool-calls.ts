import { toolInputError } from "../backends/tool-input.ts";
import type { ToolResultBlock, ToolUseBlock } from "../backends/types.ts";
import { describeError } from "../errors.ts";
import { learnNamed, redact } from "../sys/redact.ts";
import { sanitizeLine } from "../sys/sanitize.ts";
import type { AgentTool, ToolContext, ToolOutcome } from "./tools/types.ts";
import type { ToolRecord } from "./transcript.ts";

/** The run_bash facts dl measures itself (never what the model claims). */
export type BashCounters = { bashCalls: number; bashFailures: number; lastBashExit: number | null };

export type ToolCallsOutcome = {
  /** One tool_result per call run, in call order. */
  results: ToolResultBlock[];
  /** For progress lines: each tool's name, with run_bash's exit code. */
  names: string[];
  /** run_bash's jail_git_tampered verdicts, one per command that planted something. */
  tampered: string[];
};

/**
 * Runs a turn's tool calls one after another, counting run_bash exits into `bash`. Stops
 * after the call during which `ctx.signal` aborted; the rest are not started.
 */
export async function runToolCalls(
  tools: Map<string, AgentTool>,
  uses: ToolUseBlock[],
  ctx: ToolContext,
  bash: BashCounters,
  o: { record?: ((r: Omit<ToolRecord, "n">) => void) | undefined } = {},
): Promise<ToolCallsOutcome> {
  const record = o.record;
  const results: ToolResultBlock[] = [];
  const names: string[] = [];
  const tampered: string[] = [];
  for (const use of uses) {
    const t0 = performance.now();
    const out = await runTool(tools, use, ctx);
    learnNamed(out.content);
    const target = toolTarget(use.input);
    const exit = out.bash ? out.bash.exitCode : out.is_error ? 1 : 0;
    record?.({
      tool: use.name,
      target,
      exit,
      bytes_in: Buffer.byteLength(JSON.stringify(use.input ?? {})),
      bytes_out: Buffer.byteLength(out.content),
      ms: Math.round(performance.now() - t0),
    });
    if (out.bash) {
      bash.bashCalls++;
      bash.lastBashExit = out.bash.exitCode;
      if (out.bash.exitCode !== 0) bash.bashFailures++;
    } else if (use.name === "run_bash" && tools.has(use.name) && tools.get(use.name)?.refused !== true) {
      // The agent's own run_bash refused before its command ran (no jail could start, bad arguments): a failed call
      // all the same. Not one the agent was never granted (`refused`: its tools: frontmatter leaves run_bash out).
      bash.bashCalls++;
      bash.bashFailures++;
    }
    const block: ToolResultBlock = { type: "tool_result", tool_use_id: use.id, content: out.content };
    if (out.is_error) block.is_error = true;
    if (out.tamper) tampered.push(out.tamper);
    results.push(block);
    // Progress names what was touched: the path read or written, the command run (redacted).
    const what = target ? ` ${target.length > 80 ? `${target.slice(0, 79)}…` : target}` : "";
    names.push(
      `${sanitizeLine(use.name, 64)}${what}${out.bash ? ` (exit ${out.bash.exitCode})` : out.is_error ? " (failed)" : ""}`,
    );
    if (ctx.signal.aborted) break;
  }
  return { results, names, tampered };
}

/** One tool call; an unknown tool, broken arguments or a throw become an error result. */
async function runTool(tools: Map<string, AgentTool>, use: ToolUseBlock, ctx: ToolContext): Promise<ToolOutcome> {
  const tool = tools.get(use.name);
  if (!tool) {
    return {
      content: `unknown tool ${JSON.stringify(use.name)}; available: ${offeredNames(tools)}`,
      is_error: true,
    };
  }
  const broken = toolInputError(use);
  if (broken) return { content: broken, is_error: true };
  const input = use.input && typeof use.input === "object" && !Array.isArray(use.input) ? use.input : {};
  try {
    return await tool.run(input, ctx);
  } catch (e) {
    return { content: `${use.name} failed: ${describeError(e)}`, is_error: true };
  }
}

function offeredNames(tools: Map<string, AgentTool>): string {
  return (
    [...tools.values()]
      .filter((t) => !t.refused)
      .map((t) => t.spec.name)
      .join(", ") || "none"
  );
}

/** The path, command or pattern a tool call was about, from its input (one line). */
function toolTarget(input: unknown): string {
  if (!input || typeof input !== "object" || Array.isArray(input)) return "";
  const i = input as Record<string, unknown>;
  const v = [i.command, i.path, i.file_path, i.pattern, i.dir].find((x) => typeof x === "string") as string | undefined;
  // Redacted before it is cut: half a key is no longer one the channels can recognize.
  return redact((v ?? "").replace(/\s+/g, " ").trim()).slice(0, 400);
}
