import { readFileSync } from "node:fs";
import { defineCommand } from "citty";
import { findLocalServers, localOnly } from "../backends/local-servers.ts";
import type { Config } from "../config.ts";
import { settingsValueProblem } from "../config-file.ts";
import { DlError, isDlError } from "../errors.ts";
import { typedCommand } from "../sys/self-command.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { type CopyReport, copyExampleAgents, EXAMPLE_AGENTS } from "./init-agents.ts";
import { type Choice, choose, serverLines } from "./init-plan.ts";
import { type Registered, registerLine, registerWithClaude } from "./init-register.ts";
import { planLines, type SettingsPlan, settingsPlan, shadowedBy, writePlan } from "./init-settings.ts";

const PROBE_MS = 1500;

const def = defineCommand({
  meta: {
    name: "init",
    description:
      "First run: find a model server on localhost, write the settings file, copy the example agents, print the claude mcp add line",
  },
  args: {
    probe: {
      type: "string",
      valueHint: "URL",
      description: "Also ask this local server for its models (it wins over the usual ports)",
    },
    endpoint: { type: "string", valueHint: "URL", description: "Use this local server (skips choosing)" },
    model: { type: "string", valueHint: "NAME", description: "Use this model (default: the first local model listed)" },
    key: {
      type: "string",
      valueHint: "KEY",
      description: "The gateway's key, written to the settings file ('-': read one line from stdin)",
    },
    "cache-dir": { type: "string", valueHint: "DIR", description: "Write DELEGATE_CACHE_DIR (the pools' folder) too" },
    yes: {
      type: "boolean",
      default: false,
      description: "Answer yes: write the settings file and copy the example agents",
    },
    register: { type: "enum", options: ["claude"], description: "Run the registration line too (claude mcp add …)" },
    json: { type: "boolean", default: false, description: "One JSON object on stdout; asks nothing" },
  },
  async run({ args }) {
    const config = configOrExit();
    const flags = initFlags(args);
    if ("problem" in flags) {
      process.stderr.write(`dl init: ${flags.problem}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    const out: Record<string, unknown> = {};
    const say = (s: string) => args.json || process.stdout.write(`${s}\n`);
    // What is there, before anything is asked.
    const servers = await findLocalServers(flags.given, PROBE_MS, flags.key);
    out.servers = servers;
    say("model servers on this machine:");
    for (const l of serverLines(servers)) say(l);
    const picked = choose(servers, { endpoint: flags.endpoint, model: flags.model });
    if ("problem" in picked) {
      if (args.json) process.stdout.write(`${JSON.stringify({ ...out, error: picked.problem })}\n`);
      process.stderr.write(`dl init: ${picked.problem}\n`);
      process.exitCode = EXIT.failure;
      return;
    }
    const another = flags.model ? "" : "; --model NAME picks another";
    say(`\nmodel: ${picked.model} at ${picked.endpoint} (${picked.why}${another})`);
    Object.assign(out, { endpoint: picked.endpoint, model: picked.model, why: picked.why });
    const plan = settingsPlan(config, { ...picked, key: flags.key, cacheDir: flags.cacheDir });
    out.settings_file = settingsStep(config, plan, picked, { yes: args.yes, json: args.json, say });
    out.agents = agentsStep(config.paths.agentsDir, args.yes, args.json, say);
    const self = typedCommand(config.selfCommand);
    const line = registerLine(self);
    out.register_line = line;
    say(`\nregister dl with Claude Code (once, for every project; it carries no setting and no key):\n  ${line}`);
    if (args.register) out.registered = await registerWithClaude(self, config.childEnv, say);
    if (args.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    const failed = out.registered && !(out.registered as Registered).ok;
    process.exitCode = failed ? EXIT.failure : EXIT.ok;
  },
});

type Flags = {
  given: { flag: string; url: URL }[];
  endpoint?: string;
  model?: string;
  key?: string;
  cacheDir?: string;
};

/** The flags, checked: URLs on this machine only, a key from stdin when asked. */
function initFlags(args: Record<string, unknown>): Flags | { problem: string } {
  try {
    const given: Flags["given"] = [];
    if (args.endpoint) given.push({ flag: "--endpoint", url: localOnly(String(args.endpoint), "--endpoint") });
    if (args.probe) given.push({ flag: "--probe", url: localOnly(String(args.probe), "--probe") });
    const endpoint = given.find((g) => g.flag === "--endpoint")?.url.origin;
    let key = args.key === undefined ? undefined : String(args.key);
    if (key === "-") key = readFileSync(0, "utf8").split("\n")[0]?.trim();
    if (key !== undefined && (key === "" || /\s/.test(key) || settingsValueProblem(key)))
      throw new DlError(
        "bad_input",
        "--key must be one word (the gateway's key), or '-' to read it from stdin: printf '%s\\n' \"$KEY\" | dl init --key - …",
      );
    const cacheDir = args["cache-dir"] === undefined ? undefined : String(args["cache-dir"]);
    if (cacheDir !== undefined && !cacheDir.startsWith("/"))
      throw new DlError(
        "bad_input",
        `--cache-dir must be an absolute path, not ${JSON.stringify(cacheDir.slice(0, 60))}; e.g. --cache-dir "$HOME/.cache/dl"`,
      );
    const model = args.model ? String(args.model) : undefined;
    for (const [flag, value] of [
      ["--model", model],
      ["--cache-dir", cacheDir],
    ] as const) {
      const problem = value === undefined ? null : settingsValueProblem(value);
      if (problem)
        throw new DlError(
          "bad_input",
          `${flag} ${problem}; it is written as one line of the settings file (run dl help init)`,
        );
    }
    return { given, endpoint, model, key, cacheDir };
  } catch (e) {
    return { problem: isDlError(e) ? e.message : String(e) };
  }
}

/** A yes from --yes, or from the person at a terminal; never from a pipe. */
function agreed(question: string, o: { yes: boolean; json: boolean }): boolean {
  if (o.yes) return true;
  if (o.json || !process.stdin.isTTY) return false;
  return /^y(es)?$/i.test(prompt(`${question} [y/N]`)?.trim() ?? "");
}

function settingsStep(
  config: Config,
  plan: SettingsPlan,
  picked: Choice,
  o: { yes: boolean; json: boolean; say: (s: string) => unknown },
): { path: string; written: boolean; set: string[]; shadowed_by_environment: string[] } {
  o.say(`\nsettings for every dl process (dl serve, the shell commands, the watcher):`);
  for (const l of planLines(plan)) o.say(l);
  const written = agreed(`write them to ${plan.file}?`, o);
  if (written) writePlan(plan);
  o.say(
    written
      ? `wrote ${plan.file} (mode 0600)`
      : `not written (dl init --yes --endpoint ${picked.endpoint} --model ${picked.model} writes them to ${plan.file})`,
  );
  const shadowed = shadowedBy(config, plan);
  if (shadowed.length)
    o.say(`note: this shell's environment sets ${shadowed.join(", ")}, which win over the file here`);
  return { path: plan.file, written, set: Object.keys(plan.values), shadowed_by_environment: shadowed };
}

/** Copies the example agents when the user says so (--yes, or yes at the prompt in a terminal). */
function agentsStep(dir: string, yes: boolean, json: boolean, say: (s: string) => unknown): CopyReport | null {
  const names = EXAMPLE_AGENTS.map((a) => a.file.replace(/\.md$/, "")).join(", ");
  const ok = agreed(`copy the example agents (${names}) into ${dir}? files already there are kept`, { yes, json });
  const r = ok ? copyExampleAgents(dir) : null;
  if (!r) say(`\nexample agents: not copied (dl init --yes copies them into ${dir}, keeping files already there)`);
  else {
    const parts = [`copied ${r.copied.length ? r.copied.join(", ") : "none"}`];
    if (r.kept.length) parts.push(`kept your ${r.kept.join(", ")}`);
    if (r.failed.length) parts.push(`could not write ${r.failed.join(", ")}${r.problem ? ` (${r.problem})` : ""}`);
    say(`\nexample agents in ${r.dir}: ${parts.join("; ")}`);
  }
  return r;
}

export const initCommand: DlCommand = {
  def,
  examples: [
    "dl init",
    "dl init --probe http://localhost:9000 --yes",
    "dl init --endpoint http://localhost:11434 --model qwen2.5-coder:7b --yes --register claude",
    "printf '%s\\n' \"$GATEWAY_KEY\" | dl init --endpoint http://localhost:4000 --key - --yes",
    "dl init --json",
  ],
};
