import { type CommandDef, defineCommand, runCommand, showUsage } from "citty";
import { type DlErrorCode, isDlError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { EXIT } from "./config-or-exit.ts";

/**
 * Only commands that work are listed. Each loads on demand, so `dl --version` or
 * `dl wait` never pays for evaluating the MCP SDK.
 */
const subCommands: Record<string, () => Promise<CommandDef>> = {
  serve: () => import("./serve.ts").then((m) => m.serveCommand as CommandDef),
  status: () => import("./status.ts").then((m) => m.statusCommand as CommandDef),
  run: () => import("./run.ts").then((m) => m.runCommand as CommandDef),
  wait: () => import("./wait.ts").then((m) => m.waitCommand as CommandDef),
  reap: () => import("./reap.ts").then((m) => m.reapCommand as CommandDef),
};

const mainCommand = defineCommand({
  meta: {
    name: "dl",
    version: VERSION,
    description: "Delegate Claude Code sub-agent work to other model backends and coding CLIs",
  },
  subCommands,
});

/** Errors that mean "what you asked for cannot be done as asked": exit 2, like a bad flag. */
const USAGE_ERRORS = new Set<DlErrorCode>(["bad_input", "bad_config", "not_found", "workdir_forbidden", "path_escape"]);

export async function runCli(argv: string[]): Promise<void> {
  const first = argv[0];
  if (argv.length === 1 && (first === "--version" || first === "-v")) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const load = first && !first.startsWith("-") ? subCommands[first] : undefined;
  if (argv.includes("--help") || argv.includes("-h") || argv.length === 0) {
    if (load) await showUsage(await load(), mainCommand as CommandDef);
    else await showUsage(mainCommand as CommandDef);
    return;
  }
  if (first && !first.startsWith("-") && !load) {
    process.stderr.write(`dl: unknown command "${first}"; run dl --help for the list\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  try {
    await runCommand(mainCommand as CommandDef, { rawArgs: argv });
  } catch (e) {
    const msg = isDlError(e) ? e.message : e instanceof Error ? e.message : String(e);
    process.stderr.write(`dl: ${msg}\n`);
    process.exitCode = isDlError(e) && !USAGE_ERRORS.has(e.code) ? EXIT.failure : EXIT.usage;
  }
}
