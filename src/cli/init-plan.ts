import { isLocalLane } from "../backends/gateway.ts";
import type { FoundServer } from "../backends/local-servers.ts";
import { settingsValueProblem } from "../config-file.ts";
import { sanitizeLine } from "../sys/sanitize.ts";
import { shellWord } from "../sys/shell-word.ts";

/** The server name dl is registered under, everywhere (README, install.sh, examples, this line). */
const SERVER_NAME = "delegate-local";

/** Servers that run models on this machine themselves: every model they list is local. */
const LOCAL_RUNTIMES = new Set(["Ollama", "llama.cpp", "LM Studio", "vLLM"]);

export type Choice = { endpoint: string; model: string; why: string; local: boolean };

/**
 * The model dl init proposes from one server, and why: a model server's first model (it
 * runs them here); from a gateway (LiteLLM, or a URL given by hand), the first model it
 * lists whose name dl keeps on this machine (`local-*`, `ornith*`), since a gateway may
 * send any other name to a cloud provider; the server's own order, never the alphabet.
 */
function pickModel(s: FoundServer): { model: string; why: string; local: boolean } | null {
  // A name that cannot be one settings line (a line break, a control character) is never proposed.
  const models = s.models.filter((m) => settingsValueProblem(m) === null);
  const first = models[0];
  if (first === undefined) return null;
  if (LOCAL_RUNTIMES.has(s.name))
    return {
      model: first,
      why: `the first model ${s.name} lists; ${s.name} runs its models on this machine`,
      local: true,
    };
  const local = models.find(isLocalLane);
  if (local)
    return {
      model: local,
      why: `the first local model (local-*, ornith*) that ${s.base} lists; other names may go to a cloud provider`,
      local: true,
    };
  return {
    model: first,
    why: `${s.base} lists no local model (local-*, ornith*), so the first one it lists; it may be a cloud model`,
    local: false,
  };
}

const NOTHING_ANSWERED =
  "no model server answered on localhost (ports 4000, 11434, 8080, 1234, 8000); start Ollama (ollama serve) or llama.cpp (llama-server -m model.gguf --port 8080), or pass --probe URL / --endpoint URL";

/** A model given with --model, and what the chosen server said of it (a typo, a server not started yet). */
function givenWhy(model: string, endpoint: string, server: FoundServer | undefined): string {
  if (!server?.reachable) return `given with --model; nothing answers at ${endpoint} yet: start it, then run dl status`;
  if (server.models.length > 0 && !server.models.includes(model))
    return `given with --model; ${endpoint} does not list it: check the name (dl status lists what it serves)`;
  return "given with --model";
}

/**
 * What dl init settles on. `--endpoint` is that server; otherwise a server given with
 * `--probe` wins over the usual ports, then a server offering a local model, then the
 * first that serves any. `--model` is that model.
 */
export function choose(
  servers: readonly FoundServer[],
  o: { endpoint?: string; model?: string },
): Choice | { problem: string } {
  const serving = servers.filter((s) => s.reachable && s.models.length > 0);
  const ranked = [
    ...serving.filter((s) => s.name === "--probe"),
    ...serving.filter((s) => s.name !== "--probe" && pickModel(s)?.local),
    ...serving,
  ];
  const server = o.endpoint ? servers.find((s) => s.base === o.endpoint) : ranked[0];
  const endpoint = o.endpoint ?? server?.base;
  if (!endpoint) return { problem: NOTHING_ANSWERED };
  if (o.model)
    return { endpoint, model: o.model, why: givenWhy(o.model, endpoint, server), local: isLocalLane(o.model) };
  const pick = server ? pickModel(server) : null;
  if (!pick) return { problem: `${endpoint} lists no models; pass --model NAME` };
  return { endpoint, ...pick };
}

/** The one registration line (argv): no --env and no key; dl reads its settings from the settings file. */
export function registerArgv(self: readonly string[]): string[] {
  return ["claude", "mcp", "add", SERVER_NAME, "--scope", "user", "--", ...self, "serve"];
}

/** How to replace an existing registration, as a line a person can paste. */
export function replaceLine(self: readonly string[]): string {
  return `claude mcp remove ${SERVER_NAME} --scope user && ${registerArgv(self).map(shellWord).join(" ")}`;
}

export const registeredName = SERVER_NAME;

/** The servers as lines for a person: what answered and what it serves, in its own order. */
export function serverLines(servers: readonly FoundServer[]): string[] {
  const width = Math.max(0, ...servers.map((s) => s.base.length));
  return servers.map((s) => {
    const where = `  ${s.name.padEnd(10)} ${s.base.padEnd(width)}`;
    if (!s.reachable) return `${where}  ${s.error ?? "nothing answers"}`;
    const models = s.models.slice(0, 12).map((m) => sanitizeLine(m, 80));
    const more = s.models.length > 12 ? ` (+${s.models.length - 12} more)` : "";
    return `${where}  ${models.length ? models.join(", ") + more : "no models listed"}`;
  });
}
