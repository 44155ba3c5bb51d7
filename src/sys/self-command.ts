/**
 * How to run this dl again as a child: the compiled binary is its own argv[0]; under
 * `bun src/main.ts` (development, unit tests) the runtime needs the entry script too.
 */
export function isCompiledDl(execPath: string = process.execPath): boolean {
  return !/(^|\/)bun(\.exe)?$/.test(execPath);
}

/** argv prefix that starts this dl (append the subcommand and its arguments). */
export function selfArgv(): string[] {
  if (isCompiledDl()) return [process.execPath];
  const entry = process.argv[1];
  return entry ? [process.execPath, entry] : [process.execPath];
}

/** The npm package whose launcher passes `npx` as the command (scripts/npm-packages.ts names it too). */
const NPM_PACKAGE = "delegate-local";

/**
 * The words a person or a host types to start this dl (append the subcommand):
 * `selfCommand` (Config.selfCommand, what the npm package's launcher passes: its own path
 * on PATH, or `npx`), else this binary's own path. A child is started with selfArgv
 * instead: the binary itself, with no launcher to search for it.
 */
export function typedCommand(selfCommand: string | null, execPath: string = process.execPath): string[] {
  if (selfCommand === "npx") return ["npx", "-y", NPM_PACKAGE];
  return [selfCommand ?? execPath];
}

/**
 * The command a watcher runs (`… wait IDS`): the typed command, except under npx, whose
 * every start asks the registry, where the binary npx unpacked (there while this window
 * runs) answers at once.
 */
export function watchCommand(selfCommand: string | null, execPath: string = process.execPath): string[] {
  return selfCommand === "npx" ? [execPath] : typedCommand(selfCommand, execPath);
}
