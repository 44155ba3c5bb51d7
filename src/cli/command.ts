import type { ArgsDef, CommandDef } from "citty";

/**
 * One `dl` command: citty's definition (its flags, positionals and run) plus what the
 * strict parser and the help need that citty has no field for. Every command file exports
 * one of these; main.ts checks the arguments against `def.args` before citty sees them.
 */
export type DlCommand = {
  // biome-ignore lint/suspicious/noExplicitAny: each command's args type differs; main only reads them as ArgsDef.
  def: CommandDef<any>;
  /** Shown under EXAMPLES in `dl help <command>`: each a full command line. */
  examples: readonly string[];
  /** The last positional takes any number of values (`dl wait ID…`). */
  variadic?: boolean;
  /**
   * The command installs its own SIGINT/SIGTERM handling (dl serve stops cleanly, exit 0).
   * Others keep the signals' default action unless they claim them (cli/interrupt.ts).
   */
  ownSignals?: boolean;
};

export function argsOf(cmd: DlCommand): ArgsDef {
  return (cmd.def.args ?? {}) as ArgsDef;
}
