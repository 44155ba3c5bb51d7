/**
 * Which wire format a model speaks and which URL that format lives at.
 *
 * The user configures one base URL (usually a LiteLLM proxy). Models whose alias starts
 * with an OpenAI-family prefix go to `/v1/chat/completions`; everything else, including
 * `local-qwen-*` aliases, goes to Anthropic `/v1/messages`. The gateway lanes
 * (gateway.ts) build on these helpers rather than re-deriving paths.
 */
import { DlError } from "../errors.ts";
import { checkHttpUrl } from "../url.ts";
import type { Endpoint, WireFormat } from "./types.ts";

const OPENAI_PREFIXES = ["deepseek-", "openai-", "gpt-", "qwen-"] as const;

/** Prefixes whose Anthropic-format backends honour explicit `cache_control` breakpoints. */
const CACHING_PREFIXES = ["glm-", "bedrock-", "claude-", "anthropic/"] as const;

const PATHS: Record<WireFormat, string> = {
  anthropic: "/v1/messages",
  openai: "/v1/chat/completions",
};

// Longest first so `/v1/chat/completions` is stripped whole, not just `/completions`.
export const ENDPOINT_SUFFIXES = ["/v1/chat/completions", "/v1/messages", "/chat/completions", "/messages", "/v1"];

export function formatForModel(model: string): WireFormat {
  const m = model.toLowerCase();
  return OPENAI_PREFIXES.some((p) => m.startsWith(p)) ? "openai" : "anthropic";
}

/** Whether `cache_control` breakpoints should be added for this model (before the env switch). */
export function cachingAllowedFor(model: string): boolean {
  const m = model.toLowerCase();
  return CACHING_PREFIXES.some((p) => m.startsWith(p));
}

export type ResendReasoningMode = "auto" | "1" | "0";

/**
 * `auto` resends reasoning only to `deepseek-*`, which rejects a follow-up turn without
 * it; other providers may reject the field, so they get it only when forced with `1`.
 */
export function resendReasoningFor(model: string, mode: ResendReasoningMode): boolean {
  if (mode === "1") return true;
  if (mode === "0") return false;
  return model.toLowerCase().startsWith("deepseek-");
}

/**
 * Turn a configured base URL into the endpoint URL for `format`. Accepts a bare origin,
 * an origin with a prefix (`/litellm`, `/api/anthropic`), or a full endpoint URL of
 * either format; trailing slashes are ignored; a query string is kept.
 */
export function endpointUrl(baseUrl: string, format: WireFormat): string {
  const c = checkHttpUrl(baseUrl);
  if (!c.ok) {
    // Name the scheme or host only: the text itself may hold a key.
    const seen = c.url ? `${c.url.protocol}//${c.url.host}` : `${baseUrl.length} characters`;
    throw new DlError("bad_config", `backend base URL is ${c.problem} (${seen}); use e.g. http://localhost:4000`);
  }
  const url = c.url;
  let path = url.pathname.replace(/\/+$/, "");
  for (const suffix of ENDPOINT_SUFFIXES) {
    if (path.endsWith(suffix)) {
      path = path.slice(0, -suffix.length);
      break;
    }
  }
  url.pathname = path + PATHS[format];
  return url.toString();
}

export type EndpointInput = {
  baseUrl: string;
  apiKey: string;
  model: string;
  headers?: Record<string, string>;
  /** Force a format (a gateway that speaks OpenAI for every model); default by prefix. */
  format?: WireFormat;
};

export function endpointFor(input: EndpointInput): Endpoint {
  const format = input.format ?? formatForModel(input.model);
  const ep: Endpoint = { url: endpointUrl(input.baseUrl, format), format, apiKey: input.apiKey };
  if (input.headers && Object.keys(input.headers).length > 0) ep.headers = { ...input.headers };
  return ep;
}

/** Host (and port) of a URL for messages: never userinfo, path or query. */
export function safeHost(url: string): string {
  try {
    return new URL(url).host || "(no host)";
  } catch {
    return "(invalid URL)";
  }
}
