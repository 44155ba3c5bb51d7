import { describeError } from "../errors.ts";
import { redact } from "../sys/redact.ts";

/**
 * Asks an OpenAI-, Anthropic- or LiteLLM-style gateway which models it serves
 * (`GET <base>/v1/models`; Ollama's native `/api/tags` shape is understood too). Used by
 * `local_backend_status` and `dl status`: a short timeout, and an answer that never
 * carries the key.
 */
export type ModelsProbe = {
  url: string;
  reachable: boolean;
  status?: number;
  models: string[];
  latency_ms: number;
  error?: string;
};

/** `http://h:4000/v1/messages` or `…/v1/chat/completions` → `http://h:4000/v1/models`. */
function modelsUrl(endpointUrl: string): string {
  const u = new URL(endpointUrl);
  u.search = "";
  u.hash = "";
  let path = u.pathname.replace(/\/+$/, "");
  path = path.replace(/\/(messages|chat\/completions)$/, "");
  if (!/\/v1$/.test(path)) path = `${path}/v1`;
  u.pathname = `${path}/models`;
  return u.toString();
}

/** The URL as it may be shown: the one redaction (userinfo, credential parameters), no fragment. */
function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.hash = "";
    return redact(u.toString());
  } catch {
    return "(invalid URL)";
  }
}

export async function probeModels(opts: {
  endpointUrl: string;
  apiKey: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => number;
}): Promise<ModelsProbe> {
  const now = opts.now ?? (() => performance.now());
  const doFetch = opts.fetch ?? fetch;
  const url = modelsUrl(opts.endpointUrl);
  const shown = displayUrl(url);
  const started = now();
  const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
  if (opts.apiKey) {
    headers["x-api-key"] = opts.apiKey;
    headers.authorization = `Bearer ${opts.apiKey}`;
  }
  try {
    const res = await doFetch(url, { headers, signal: AbortSignal.timeout(opts.timeoutMs), redirect: "manual" });
    const latency_ms = Math.round(now() - started);
    if (!res.ok) {
      await res.body?.cancel();
      const hint = res.status === 401 || res.status === 403 ? "; check DELEGATE_LOCAL_KEY" : "";
      return {
        url: shown,
        reachable: true,
        status: res.status,
        models: [],
        latency_ms,
        error: `${shown} answered HTTP ${res.status}${hint}`,
      };
    }
    const body = (await res.json()) as { data?: { id?: unknown }[]; models?: { name?: unknown; model?: unknown }[] };
    const models = [...(body.data ?? []).map((m) => m.id), ...(body.models ?? []).map((m) => m.name ?? m.model)].filter(
      (m): m is string => typeof m === "string",
    );
    return { url: shown, reachable: true, status: res.status, models: [...new Set(models)], latency_ms };
  } catch (e) {
    const latency_ms = Math.round(now() - started);
    const timedOut = e instanceof DOMException && e.name === "TimeoutError";
    const why = timedOut ? `no answer within ${opts.timeoutMs} ms` : `unreachable (${describeError(e)})`;
    return {
      url: shown,
      reachable: false,
      models: [],
      latency_ms,
      error: `${shown}: ${why}; is the gateway running and is DELEGATE_LOCAL_URL right?`,
    };
  }
}
