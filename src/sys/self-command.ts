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
