import type { FoundServer } from "../backends/local-servers.ts";
import { sanitizeLine } from "../jobs/sanitize.ts";

/** The server name dl is registered under, everywhere (README, examples, this line). */
const SERVER_NAME = "delegate-local";

/** One word for a POSIX shell: as it is when safe, else single-quoted. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/** What dl init settles on: the endpoint and model, from the flags or the first server that serves one. */
export function choose(
  servers: readonly FoundServer[],
  o: { endpoint?: string; model?: string },
): { endpoint: string; model: string } | { problem: string } {
  const serving = servers.filter((s) => s.reachable && s.models.length > 0);
  const server = o.endpoint ? servers.find((s) => s.base === o.endpoint) : serving[0];
  const endpoint = o.endpoint ?? server?.base;
  if (!endpoint)
    return {
      problem:
        "no model server answered on localhost (ports 4000, 11434, 8080, 1234, 8000); start Ollama (ollama serve) or llama.cpp (llama-server -m model.gguf --port 8080), or pass --probe URL / --endpoint URL",
    };
  const model = o.model ?? server?.models[0];
  if (!model) return { problem: `${endpoint} lists no models; pass --model NAME` };
  return { endpoint, model };
}

/** The `claude mcp add` command line (argv), with the absolute path of this binary. */
export function registerArgv(self: string, endpoint: string, model: string): string[] {
  return [
    "claude",
    "mcp",
    "add",
    SERVER_NAME,
    "--scope",
    "user",
    "--env",
    `DELEGATE_LOCAL_URL=${endpoint}`,
    "--env",
    `DELEGATE_LOCAL_MODEL=${model}`,
    "--",
    self,
    "serve",
  ];
}

/** The servers as lines for a person: what answered and what it serves. */
export function serverLines(servers: readonly FoundServer[]): string[] {
  return servers.map((s) => {
    if (!s.reachable) return `  ${s.name.padEnd(10)} ${s.base}  ${s.error ?? "nothing answers"}`;
    const models = s.models.slice(0, 12).map((m) => sanitizeLine(m, 80));
    const more = s.models.length > 12 ? ` (+${s.models.length - 12} more)` : "";
    return `  ${s.name.padEnd(10)} ${s.base}  ${models.length ? models.join(", ") + more : "no models listed"}`;
  });
}
