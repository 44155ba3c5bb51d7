import { existsSync } from "node:fs";
import { constants } from "node:os";
import { z } from "zod";
import { describeError, isDlError } from "../../errors.ts";
import type { CommandJail, JailCheck } from "../../sandbox/command-jail.ts";
import { jailFailureMessage } from "../../sandbox/jail-causes.ts";
import { treeReportLines } from "../../sandbox/tree-report.ts";
import type { JailNet } from "../../sys/jail-net.ts";
import { runGroup, type StreamName } from "../../sys/process.ts";
import { sharedSemaphore } from "../semaphore.ts";
import { bashEnv } from "./env.ts";
import type { RunBashSettings } from "./settings.ts";
import { type AgentTool, defineTool, fail, type ToolOutcome } from "./types.ts";

function pickShell(): string {
  for (const s of ["/bin/bash", "/usr/bin/bash"]) if (existsSync(s)) return s;
  return "/bin/sh";
}

/**
 * Keeps the first and the last bytes of a stream. Errors and test summaries usually sit
 * at the end of the output, so a head-only cut would hide exactly what the model needs.
 */
class TailKeeper {
  private chunks: Uint8Array[] = [];
  private size = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Uint8Array): void {
    this.chunks.push(chunk.slice());
    this.size += chunk.byteLength;
    while (this.chunks.length > 1 && this.size - (this.chunks[0]?.byteLength ?? 0) >= this.cap) {
      this.size -= this.chunks.shift()?.byteLength ?? 0;
    }
  }
  bytes(): Uint8Array {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.byteLength - this.cap));
  }
}

function clip(name: StreamName, head: Uint8Array, total: number, tail: TailKeeper, cap: number): string {
  const dec = new TextDecoder();
  if (total <= cap) return dec.decode(head);
  const headPart = Math.floor(cap / 3);
  const tailBytes = tail.bytes();
  const tailPart = Math.min(cap - headPart, tailBytes.byteLength);
  return (
    dec.decode(head.subarray(0, headPart)) +
    `\n[... ${name} truncated: ${total - headPart - tailPart} of ${total} bytes cut; showing the first ${headPart} and the last ${tailPart} bytes ...]\n` +
    dec.decode(tailBytes.subarray(tailBytes.byteLength - tailPart))
  );
}

function signalNumber(sig: string | null): number | null {
  if (!sig) return null;
  const n = (constants.signals as Record<string, number>)[sig];
  return typeof n === "number" ? n : null;
}

const COMMAND_ERROR = "command must be a non-empty string";
const runBashInput = z.object({
  command: z
    .string({ error: COMMAND_ERROR })
    .refine((c) => c.trim() !== "", { error: COMMAND_ERROR })
    .describe("The command line, run with bash -c"),
});

/** The command as it runs: inside the jail when one is configured, else as given. */
async function commandFor(
  argv: string[],
  env: Record<string, string>,
  workdir: string,
  jail: CommandJail | null | undefined,
): Promise<{
  argv: string[];
  env: Record<string, string>;
  jailNet?: JailNet | null;
  jailMarked?: boolean;
  dispose: () => Promise<JailCheck | null>;
}> {
  if (!jail) return { argv, env, dispose: async () => null };
  return jail.wrap(argv, env, workdir);
}

/** What the model reads of a finished command: how it ended, its exit code, its output (head and tail). */
function commandReport(
  r: Awaited<ReturnType<typeof runGroup>>,
  tails: { stdout: TailKeeper; stderr: TailKeeper },
  settings: RunBashSettings,
  timeoutS: number,
): { exitCode: number; parts: string[] } {
  // The shell's convention for a signal death (128 + n), so the number is never null.
  const exitCode = r.exitCode ?? 128 + (signalNumber(r.signal) ?? 0);
  const parts: string[] = [];
  if (r.timedOut) parts.push(`[command timed out after ${timeoutS} s; its whole process group was killed]`);
  if (r.aborted) parts.push("[command cancelled: the delegation was aborted]");
  parts.push(`exit code: ${exitCode}${r.signal ? ` (killed by ${r.signal})` : ""}`);
  const out = clip("stdout", r.stdout.bytes, r.stdout.totalBytes, tails.stdout, settings.stdoutCap);
  const err = clip("stderr", r.stderr.bytes, r.stderr.totalBytes, tails.stderr, settings.stderrCap);
  if (out) parts.push(`--- stdout ---\n${out}`);
  if (err) parts.push(`--- stderr ---\n${err}`);
  if (!out && !err) parts.push("(no output)");
  return { exitCode, parts };
}

export function runBashTool(settings: RunBashSettings): AgentTool {
  const shell = pickShell();
  const env = bashEnv(settings.baseEnv, settings.passthrough);
  const limiter = settings.limiter ?? sharedSemaphore(settings.maxConcurrent);
  const timeoutS = Math.round(settings.timeoutMs / 1000);
  return defineTool({
    name: "run_bash",
    description: `Run a bash command in the working directory and get its exit code, stdout (cut to ${settings.stdoutCap / 1024} KB) and stderr (cut to ${settings.stderrCap / 1024} KB). No stdin; the command is killed after ${timeoutS} s. ${settings.jail ? "It runs in a jail: the system and git's metadata are read-only, nothing of $HOME is visible." : "It runs without a sandbox, as the user: do not touch git's metadata, hooks or tool configuration."}`,
    input: runBashInput,
    async run({ command }, ctx): Promise<ToolOutcome> {
      let release: () => void;
      try {
        release = await limiter.acquire(ctx.signal);
      } catch (e) {
        return fail(`run_bash: ${describeError(e)}`);
      }
      const tails = { stdout: new TailKeeper(settings.stdoutCap), stderr: new TailKeeper(settings.stderrCap) };
      let dispose: () => Promise<JailCheck | null> = async () => null;
      try {
        const cmd = await commandFor([shell, "-c", command], env, ctx.workdir, settings.jail);
        dispose = cmd.dispose;
        const r = await runGroup({
          argv: cmd.argv,
          cwd: ctx.workdir,
          env: cmd.env,
          jailNet: cmd.jailNet ?? undefined,
          jailMarked: cmd.jailMarked,
          // Without the sandbox, as root: a pid namespace of its own (no /proc reach to dl).
          ownPidNamespace: !cmd.jailMarked,
          stdoutCap: settings.stdoutCap,
          stderrCap: settings.stderrCap,
          onOutput: (stream, chunk) => tails[stream].push(chunk),
          timeoutMs: settings.timeoutMs,
          signal: ctx.signal,
          graceMs: settings.graceMs,
        });
        // Known out of band: the jail never started the command (its output is not asked).
        if (r.jailSetupFailure) return fail(`run_bash: ${jailFailureMessage(r.jailSetupFailure).message}`);
        const { exitCode, parts } = commandReport(r, tails, settings, timeoutS);
        // The git check runs here, not in finally, so its verdict reaches the result.
        const check = await cmd.dispose();
        dispose = async () => null;
        const tamper = check?.tamper ?? null;
        if (tamper) parts.unshift(`[${tamper.failureKind}: ${tamper.message}]`);
        if (check) parts.push(`--- measured by dl ---\n${treeReportLines(check.report).join("\n")}`);
        const isError = exitCode !== 0 || tamper !== null;
        const bash = { exitCode, timedOut: r.timedOut };
        return { content: parts.join("\n"), is_error: isError, bash, ...(tamper ? { tamper: tamper.message } : {}) };
      } catch (e) {
        const why = isDlError(e) ? e.message : describeError(e);
        return fail(`run_bash: the command could not be run (${why})`);
      } finally {
        await dispose().catch(() => null);
        release();
      }
    },
  });
}
