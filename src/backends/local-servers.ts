import { DlError } from "../errors.ts";
import { type ModelsProbe, probeModels } from "./models-list.ts";

/**
 * Model servers a newcomer may already run on this machine, on their usual ports. `dl
 * init` asks each for its models; it reaches nothing but localhost.
 */
const LOCAL_SERVERS = [
  { name: "LiteLLM", port: 4000 },
  { name: "Ollama", port: 11434 },
  { name: "llama.cpp", port: 8080 },
  { name: "LM Studio", port: 1234 },
  { name: "vLLM", port: 8000 },
] as const;

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** The URL, if it names this machine over http(s); else a DlError saying why not. */
export function localOnly(raw: string, flag: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new DlError(
      "bad_input",
      `${flag} ${JSON.stringify(raw.slice(0, 60))} is not a URL; e.g. http://localhost:11434`,
    );
  }
  if (!/^https?:$/.test(u.protocol) || u.username || u.password)
    throw new DlError("bad_input", `${flag} must be an http(s) URL without credentials, e.g. http://localhost:11434`);
  if (!LOOPBACK.has(u.hostname))
    throw new DlError(
      "bad_input",
      `${flag} must name this machine (localhost, 127.0.0.1 or [::1]), e.g. ${flag} http://localhost:11434; dl init reaches nothing else (a remote gateway goes straight into the settings file as DELEGATE_LOCAL_URL)`,
    );
  return u;
}

export type FoundServer = { name: string; base: string } & Pick<ModelsProbe, "reachable" | "models" | "error">;

/** The origin (and any path prefix) of a server URL, without the endpoint suffix. */
function baseOf(u: URL): string {
  const path = u.pathname.replace(/\/+$/, "").replace(/\/(v1\/messages|v1\/chat\/completions|v1\/models|v1)$/, "");
  return `${u.protocol}//${u.host}${path}`;
}

/** Port and path: one server, whichever loopback name (localhost, 127.0.0.1, [::1]) reaches it. */
function placeOf(base: string): string {
  const u = new URL(base);
  return `${u.port || (u.protocol === "https:" ? "443" : "80")}${u.pathname.replace(/\/+$/, "")}`;
}

/**
 * Asks each URL given by a flag (named by it: `--probe`, `--endpoint`) and every usual
 * port which models it serves, all at once; a usual port a flag already names is asked once.
 */
export async function findLocalServers(
  given: readonly { flag: string; url: URL }[],
  timeoutMs: number,
  apiKey = "",
): Promise<FoundServer[]> {
  const named = given.map((g) => ({ name: g.flag, base: baseOf(g.url) }));
  const seen = new Set(named.map((t) => placeOf(t.base)));
  const usual = LOCAL_SERVERS.map((s) => ({ name: s.name, base: `http://127.0.0.1:${s.port}` })).filter(
    (t) => !seen.has(placeOf(t.base)),
  );
  return Promise.all(
    [...named, ...usual].map(async (t) => {
      const p = await probeModels({ endpointUrl: `${t.base}/v1/messages`, apiKey, timeoutMs });
      const found: FoundServer = { name: t.name, base: t.base, reachable: p.reachable && !p.error, models: p.models };
      // Nothing listening is the common case, not an error worth a line.
      if (p.reachable && p.error) found.error = `answered HTTP ${p.status ?? "?"} to GET /v1/models`;
      return found;
    }),
  );
}
