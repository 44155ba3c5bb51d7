import { redact } from "../sys/redact.ts";

/**
 * Every command's output, text and JSON, on stdout and stderr, goes through the one
 * redaction (sys/redact.ts): the process's two streams are wrapped once, so a line any
 * command prints (today's or tomorrow's) reaches the terminal or a pipe without a key.
 * `dl serve` skips this at start (its frames and logs have sinks of their own, and Node's
 * stream objects cost it memory) and installs it on the paths that print.
 */
let installed = false;

type Write = typeof process.stdout.write;

function redacting(write: Write): Write {
  return ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
    // A Buffer's encoding argument no longer applies to the string it became.
    const tail = typeof rest[0] === "string" ? rest.slice(1) : rest;
    return (write as (...a: unknown[]) => boolean)(redact(text), "utf8", ...tail);
  }) as Write;
}

export function redactStdio(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) stream.write = redacting(stream.write.bind(stream));
}
