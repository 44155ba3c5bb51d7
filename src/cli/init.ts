import { defineCommand } from "citty";
import { findLocalServers, localOnly } from "../backends/local-servers.ts";
import { DlError, describeError, isDlError } from "../errors.ts";
import { sanitizeLine } from "../jobs/sanitize.ts";
import { runGroup } from "../sys/process.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { type CopyReport, copyExampleAgents, EXAMPLE_AGENTS } from "./init-agents.ts";
import { choose, registerArgv, serverLines, shellWord } from "./init-plan.ts";

const PROBE_MS = 1500;

const def = defineCommand({
  meta: {
    name: "init",
    description: "First run: find a model server on localhost, copy the example agents, print the claude mcp add line",
  },
  args: {
    probe: { type: "string", valueHint: "URL", description: "Also ask this local server for its models" },
    endpoint: { type: "string", valueHint: "URL", description: "Use this local server (skips choosing)" },
    model: { type: "string", valueHint: "NAME", description: "Use this model (default: the first one listed)" },
    yes: { type: "boolean", default: false, description: "Answer yes: copy the example agents without asking" },
    register: { type: "enum", options: ["claude"], description: "Run the registration line too (claude mcp add …)" },
    json: { type: "boolean", default: false, description: "One JSON object on stdout; asks nothing" },
  },
  async run({ args }) {
    const config = configOrExit();
    let extra: URL[];
    let endpoint: string | undefined;
    try {
      extra = args.probe ? [localOnly(String(args.probe), "--probe")] : [];
      endpoint = args.endpoint ? localOnly(String(args.endpoint), "--endpoint").origin : undefined;
    } catch (e) {
      process.stderr.write(`dl init: ${isDlError(e) ? e.message : String(e)}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    if (endpoint) extra.push(new URL(endpoint));
    const servers = await findLocalServers(extra, PROBE_MS);
    const picked = choose(servers, { endpoint, model: args.model ? String(args.model) : undefined });
    const agents = offerAgents(config.paths.agentsDir, args.yes, args.json);
    const out: Record<string, unknown> = { servers, agents };
    const say = (s: string) => args.json || process.stdout.write(`${s}\n`);
    say("model servers on this machine:");
    for (const l of serverLines(servers)) say(l);
    say(agentsLine(agents, config.paths.agentsDir));
    if ("problem" in picked) {
      if (args.json) process.stdout.write(`${JSON.stringify({ ...out, error: picked.problem })}\n`);
      process.stderr.write(`dl init: ${picked.problem}\n`);
      process.exitCode = EXIT.failure;
      return;
    }
    const argv = registerArgv(process.execPath, picked.endpoint, picked.model);
    const line = argv.map(shellWord).join(" ");
    Object.assign(out, { endpoint: picked.endpoint, model: picked.model, register_line: line });
    say(`\nregister dl with Claude Code (once, for every project):\n  ${line}`);
    if (args.register) out.registered = await register(argv, config.childEnv, say);
    if (args.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    process.exitCode = out.registered && !(out.registered as { ok: boolean }).ok ? EXIT.failure : EXIT.ok;
  },
});

/** Copies the example agents when the user says so (--yes, or yes at the prompt in a terminal). */
function offerAgents(dir: string, yes: boolean, json: boolean): CopyReport | null {
  let ok = yes;
  if (!ok && !json && process.stdin.isTTY) {
    const names = EXAMPLE_AGENTS.map((a) => a.file.replace(/\.md$/, "")).join(", ");
    const answer = prompt(`copy the example agents (${names}) into ${dir}? files already there are kept [y/N]`);
    ok = /^y(es)?$/i.test(answer?.trim() ?? "");
  }
  return ok ? copyExampleAgents(dir) : null;
}

function agentsLine(r: CopyReport | null, dir: string): string {
  if (!r) return `\nexample agents: not copied (dl init --yes copies them into ${dir}, keeping files already there)`;
  const parts = [`copied ${r.copied.length ? r.copied.join(", ") : "none"}`];
  if (r.kept.length) parts.push(`kept your ${r.kept.join(", ")}`);
  if (r.failed.length) parts.push(`could not write ${r.failed.join(", ")}`);
  return `\nexample agents in ${r.dir}: ${parts.join("; ")}`;
}

/** Runs `claude mcp add …` (no shell: each argument as it is). */
async function register(
  argv: string[],
  env: Readonly<Record<string, string>>,
  say: (s: string) => unknown,
): Promise<{ ok: boolean; output: string }> {
  if (!Bun.which("claude", { PATH: env.PATH ?? "" })) {
    const why = "claude is not on PATH: install Claude Code, or run the line above yourself";
    say(`\n${why}`);
    return { ok: false, output: why };
  }
  try {
    const r = await runGroup({
      argv,
      cwd: process.cwd(),
      env: { ...env },
      timeoutMs: 30_000,
      stdoutCap: 8192,
      stderrCap: 8192,
    });
    const output = sanitizeLine(`${r.stdout.text()} ${r.stderr.text()}`, 600);
    say(`\nclaude mcp add ${r.exitCode === 0 ? "registered" : `failed (exit ${r.exitCode})`}: ${output}`);
    return { ok: r.exitCode === 0, output };
  } catch (e) {
    const why = e instanceof DlError ? e.message : describeError(e);
    say(`\nclaude mcp add could not run: ${why}`);
    return { ok: false, output: why };
  }
}

export const initCommand: DlCommand = {
  def,
  examples: [
    "dl init",
    "dl init --probe http://localhost:9000 --yes",
    "dl init --endpoint http://localhost:11434 --model qwen2.5-coder:7b --register claude",
    "dl init --json",
  ],
};
