/**
 * The predecessor's watcher was its own command, `delegate-wait`; users and its docs still
 * type that. A link of that name to this binary (`ln -s dl delegate-wait`) runs `dl wait`.
 * Any other name, `dl` included, keeps the normal command line.
 */
const ALIASES: Record<string, string> = { "delegate-wait": "wait" };

/** The command line to dispatch, given the name the binary was started under. */
export function commandLine(argv0: string, args: string[]): string[] {
  const name = argv0.slice(argv0.lastIndexOf("/") + 1).replace(/\.exe$/i, "");
  const command = ALIASES[name];
  return command ? [command, ...args] : args;
}
