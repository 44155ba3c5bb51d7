import { redact } from "../sys/redact.ts";
import { EXIT } from "./exit.ts";

/**
 * What a person sees when something escapes every command's own handling (an exception
 * on a timer or a promise nobody awaited): one line naming the command, what failed and
 * the next thing to run, and exit 1. Bun's default prints a page of minified source
 * instead, which says nothing to the person and can show file paths and values.
 */
export function lastResortLine(command: string, e: unknown): string {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as NodeJS.ErrnoException).code;
  const said = firstLine(err.message);
  // Node's own errors already start with their code ("EACCES: permission denied, …").
  const what = code && !said.startsWith(String(code)) ? `${String(code).slice(0, 20)}: ${said}` : said;
  const label = command ? `dl ${command}` : "dl";
  return `${label}: unexpected error (${what}); run dl status to check this machine's set-up, and report it with dl --version if it persists\n`;
}

/** The message's first line, redacted whole first: a key broken over its lines would leave its first half otherwise. */
function firstLine(message: string): string {
  const line = (redact(message).split("\n")[0] ?? "").replace(/[\p{Cc}\p{Cf}]+/gu, " ").trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line || "no message";
}

let installed = false;

/** Installs the one handler for exceptions and rejections that nothing else caught. */
export function installLastResort(command: string): void {
  if (installed) return;
  installed = true;
  const end = (e: unknown) => {
    try {
      process.stderr.write(lastResortLine(command, e));
    } finally {
      process.exit(EXIT.failure);
    }
  };
  process.on("uncaughtException", end);
  process.on("unhandledRejection", end);
}
