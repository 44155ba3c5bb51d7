import { defineCommand, runCommand, showUsage, type CommandDef } from "citty";
import { isDlError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { EXIT } from "./config-or-exit.ts";
import { serveCommand } from "./serve.ts";
import { statusCommand } from "./status.ts";

/** Only commands that work are listed; later issues add wait, reap and run here. */
const subCommands: Record<string, CommandDef> = {
  serve: serveCommand as CommandDef,
  status: statusCommand as CommandDef,
};

export const mainCommand = defineCommand({
  meta: {
    name: "dl",
    version: VERSION,
    description: "Delegate Claude Code sub-agent work to other model backends and coding CLIs",
  },
  subCommands,
});

export async function runCli(argv: string[]): Promise<void> {
  const first = argv[0];
  if (argv.length === 1 && (first === "--version" || first === "-v")) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const sub = first && !first.startsWith("-") ? subCommands[first] : undefined;
  if (argv.includes("--help") || argv.includes("-h") || argv.length === 0) {
    if (sub) await showUsage(sub, mainCommand as CommandDef);
    else await showUsage(mainCommand as CommandDef);
    return;
  }
  if (first && !first.startsWith("-") && !sub) {
    process.stderr.write(`dl: unknown command "${first}"; run dl --help for the list\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  try {
    await runCommand(mainCommand as CommandDef, { rawArgs: argv });
  } catch (e) {
    const msg = isDlError(e) ? e.message : e instanceof Error ? e.message : String(e);
    process.stderr.write(`dl: ${msg}\n`);
    process.exitCode = isDlError(e) && e.code !== "bad_input" && e.code !== "bad_config" ? EXIT.failure : EXIT.usage;
  }
}
