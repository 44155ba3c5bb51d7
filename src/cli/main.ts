import { runCommand } from "citty";
import { knowSecretsEarly } from "../config.ts";
import { type DlErrorCode, isDlError } from "../errors.ts";
import { BUILD, VERSION, versionLine } from "../version.ts";
import { argsOf, type DlCommand } from "./command.ts";
import { EXIT } from "./exit.ts";
import { colourFor, commandHelp, mainHelp } from "./help.ts";
import { interruptedExitCode } from "./interrupt.ts";
import { installLastResort } from "./last-resort.ts";
import { redactStdio } from "./redacted-stdio.ts";
import { argsProblem } from "./strict-args.ts";
import { closest } from "./suggest.ts";

/**
 * The one place command lines are checked and dispatched (test/docs/doc-claims.test.ts
 * reads COMMANDS to check what the docs name). Each command loads on demand,
 * so `dl --version` or `dl wait` never pays for evaluating the MCP SDK.
 */
export const COMMANDS: Record<string, () => Promise<DlCommand>> = {
  serve: () => import("./serve.ts").then((m) => m.serveCommand),
  status: () => import("./status.ts").then((m) => m.statusCommand),
  run: () => import("./run.ts").then((m) => m.runCommand),
  wait: () => import("./wait.ts").then((m) => m.waitCommand),
  reap: () => import("./reap.ts").then((m) => m.reapCommand),
  jobs: () => import("./jobs.ts").then((m) => m.jobsCommand),
  show: () => import("./show.ts").then((m) => m.showCommand),
  logs: () => import("./logs.ts").then((m) => m.logsCommand),
  cancel: () => import("./cancel.ts").then((m) => m.cancelCommand),
  usage: () => import("./usage.ts").then((m) => m.usageCommand),
  init: () => import("./init.ts").then((m) => m.initCommand),
  supervise: () => import("./supervise.ts").then((m) => m.superviseCommand),
};
const NAMES = Object.keys(COMMANDS);

/** Errors that mean "what you asked for cannot be done as asked": exit 2, like a bad flag. */
const USAGE_ERRORS = new Set<DlErrorCode>(["bad_input", "bad_config", "not_found", "workdir_forbidden", "path_escape"]);

/** One line on stderr and exit 2: what was wrong and where to look. */
function usageError(where: string, problem: string, helpFor?: string): void {
  redactStdio(); // dl serve's streams too: the refused argument may be a key
  process.stderr.write(`${where}: ${problem} (run dl help${helpFor ? ` ${helpFor}` : ""})\n`);
  process.exitCode = EXIT.usage;
}

function unknownCommand(name: string): void {
  // `dl version` is `dl --version`: a flag, suggested as the whole command to type.
  const guess = closest(name, [...NAMES, "help", "--version"]);
  const typed = guess?.startsWith("--") ? `dl ${guess}` : guess;
  usageError("dl", `unknown command ${JSON.stringify(name.slice(0, 60))}${typed ? `; did you mean ${typed}?` : ""}`);
}

async function showHelp(topic: string | undefined): Promise<void> {
  const colour = colourFor(process.stdout);
  if (topic === undefined) {
    const all = await Promise.all(NAMES.map(async (name) => ({ name, cmd: await COMMANDS[name]!() })));
    process.stdout.write(mainHelp(VERSION, all, colour));
    return;
  }
  const load = COMMANDS[topic];
  if (!load) return unknownCommand(topic);
  process.stdout.write(commandHelp(topic, await load(), colour));
}

/** `dl --version [--json]`: the version, git commit and build target, as a line or one JSON object. */
function printVersion(flag: string, rest: string[]): void {
  const json = rest[0] === "--json";
  const extra = rest.slice(json ? 1 : 0);
  if (extra.length) usageError("dl", `unexpected argument ${JSON.stringify(extra[0]!.slice(0, 60))} after ${flag}`);
  else process.stdout.write(json ? `${JSON.stringify(BUILD)}\n` : `${versionLine()}\n`);
}

/** `dl`, `dl -V`, `dl help [cmd]`: answered without running a command. Returns true when handled. */
async function topLevel(argv: string[]): Promise<boolean> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help") {
    await showHelp(undefined);
    return true;
  }
  if (first === "-V" || first === "-v" || first === "--version") {
    printVersion(first, rest);
    return true;
  }
  if (first === "help") {
    if (rest.length > 1) usageError("dl help", `unexpected argument ${JSON.stringify(rest[1]!.slice(0, 60))}`);
    else await showHelp(rest[0]);
    return true;
  }
  if (first.startsWith("-")) {
    const guess = closest(first, ["--help", "--version"]);
    usageError("dl", `unknown flag ${first}${guess ? `; did you mean ${guess}?` : ""}; flags go after the command`);
    return true;
  }
  return false;
}

export async function runCli(argv: string[]): Promise<void> {
  // Before any argument is checked: a refusal that echoes one must not print a key dl holds.
  knowSecretsEarly();
  installLastResort(argv[0] !== undefined && argv[0] in COMMANDS ? argv[0] : "");
  // dl serve's stdout is MCP frames (their transport redacts them); it wraps its streams where it prints.
  if (argv[0] !== "serve") redactStdio();
  if (await topLevel(argv)) return;
  const name = argv[0]!;
  const load = COMMANDS[name];
  if (!load) return unknownCommand(name);
  const cmd = await load();
  const rest = argv.slice(1);
  const end = rest.indexOf("--");
  const flags = end === -1 ? rest : rest.slice(0, end);
  if (flags.includes("--help") || flags.includes("-h")) {
    process.stdout.write(commandHelp(name, cmd, colourFor(process.stdout)));
    return;
  }
  const problem = argsProblem(rest, argsOf(cmd), cmd.variadic === true);
  if (problem) return usageError(`dl ${name}`, problem, name);
  try {
    await runCommand(cmd.def, { rawArgs: rest });
  } catch (e) {
    const msg = isDlError(e) ? e.message : e instanceof Error ? e.message : String(e);
    redactStdio();
    process.stderr.write(`dl ${name}: ${msg}\n`);
    process.exitCode = isDlError(e) && USAGE_ERRORS.has(e.code) ? EXIT.usage : EXIT.failure;
  }
  const interrupted = interruptedExitCode();
  if (interrupted !== null) process.exitCode = interrupted;
}
