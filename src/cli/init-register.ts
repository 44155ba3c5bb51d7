import { describeError, isDlError } from "../errors.ts";
import { runGroup } from "../sys/process.ts";
import { sanitizeLine } from "../sys/sanitize.ts";
import { shellWord } from "../sys/shell-word.ts";
import { registerArgv, registeredName, replaceLine } from "./init-plan.ts";

/**
 * `dl init --register claude`: runs the registration line, unless Claude Code already
 * has an entry of that name, which is then named with the line that replaces it. What
 * `claude mcp get` prints is never shown: an older registration may carry a key.
 */
export type Registered = { ok: boolean; state: "registered" | "exists" | "failed"; output: string };

async function run(argv: string[], env: Readonly<Record<string, string>>) {
  return runGroup({ argv, cwd: process.cwd(), env: { ...env }, timeoutMs: 30_000, stdoutCap: 8192, stderrCap: 8192 });
}

export async function registerWithClaude(
  self: readonly string[],
  env: Readonly<Record<string, string>>,
  say: (s: string) => unknown,
): Promise<Registered> {
  if (!Bun.which("claude", { PATH: env.PATH ?? "" })) {
    const why = "claude is not on PATH: install Claude Code, or run the line above yourself";
    say(`\n${why}`);
    return { ok: false, state: "failed", output: why };
  }
  try {
    const existing = await run(["claude", "mcp", "get", registeredName], env);
    if (existing.exitCode === 0) {
      const shown = existing.stdout.text();
      const same = self.every((word) => shown.includes(word));
      const what = same ? "with this dl" : "with another command";
      const why = `${registeredName} is already registered with Claude Code ${what} (claude mcp get ${registeredName} shows it); to replace it: ${replaceLine(self)}`;
      say(`\n${why}`);
      return { ok: same, state: "exists", output: why };
    }
    const r = await run(registerArgv(self), env);
    const output = sanitizeLine(`${r.stdout.text()} ${r.stderr.text()}`.trim(), 600);
    say(`\nclaude mcp add ${r.exitCode === 0 ? "registered" : `failed (exit ${r.exitCode})`}: ${output}`);
    return { ok: r.exitCode === 0, state: r.exitCode === 0 ? "registered" : "failed", output };
  } catch (e) {
    const why = isDlError(e) ? e.message : describeError(e);
    say(`\nclaude mcp could not run: ${why}; run the line above yourself`);
    return { ok: false, state: "failed", output: why };
  }
}

/** The registration line as printed everywhere. */
export function registerLine(self: readonly string[]): string {
  return registerArgv(self).map(shellWord).join(" ");
}
