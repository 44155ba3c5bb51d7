/**
 * What both wire formats share on the HTTP side: request headers, and turning a failed
 * status or a broken connection into a DlError that says what failed, whether a retry
 * can help, and what to try — without ever carrying the API key, URL userinfo or query.
 */
import { DlError } from "../errors.ts";
import { knowSecrets, redact, urlSecretsOf } from "../sys/redact.ts";
import { safeHost } from "./route.ts";
import type { Endpoint } from "./types.ts";

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504, 529]);

/** Data every backend DlError carries; retry.ts reads `retryable` and `retryAfterMs`. */
type BackendErrorData = {
  host: string;
  status?: number;
  retryable: boolean;
  retryAfterMs?: number;
};

/**
 * The request's headers. Its key and header values are secrets this process now holds
 * (a delegate_to_provider key among them, learned at run time): every channel cuts them.
 * A provider job's child holds its key the same way, from DELEGATE_RUN_PROVIDER_KEY.
 */
export function requestHeaders(ep: Endpoint): Record<string, string> {
  knowSecrets(endpointSecrets(ep));
  const h: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (ep.apiKey) {
    h["x-api-key"] = ep.apiKey;
    h.authorization = `Bearer ${ep.apiKey}`;
  }
  // Real Anthropic requires a version header; proxies ignore it.
  if (ep.format === "anthropic") h["anthropic-version"] = "2023-06-01";
  if (ep.headers) for (const [k, v] of Object.entries(ep.headers)) h[k.toLowerCase()] = v;
  return h;
}

/** Values of response headers starting with any of `prefixes` (lower-cased names). */
export function pickHeaders(headers: Headers, prefixes: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (prefixes.length === 0) return out;
  headers.forEach((value, name) => {
    const n = name.toLowerCase();
    if (prefixes.some((p) => n.startsWith(p))) out[n] = value;
  });
  return out;
}

/**
 * A short, single-line excerpt of a response body that is safe to show: every secret
 * (the endpoint's key and headers, known since requestHeaders, and everything else
 * sys/redact.ts knows or recognizes) replaced.
 */
export function sanitizeExcerpt(text: string, max = 240): string {
  // Redact before cutting, so a secret straddling the cut cannot leave half of itself.
  const t = redact(text.length > 64 * 1024 ? text.slice(0, 64 * 1024) : text)
    .replace(/\s+/g, " ")
    .trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/** `Retry-After` as milliseconds from now: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Every credential an endpoint carries: its key and any header value (virtual keys). */
function endpointSecrets(ep: Endpoint): string[] {
  return [ep.apiKey, ...Object.values(ep.headers ?? {}), ...urlSecretsOf(ep.url)];
}

/** Longest error body read; the rest is never downloaded. */
export const ERROR_BODY_MAX_BYTES = 64 * 1024;
/** Longest non-streamed reply accepted. */
export const JSON_BODY_MAX_BYTES = 64 * 1024 * 1024;

/**
 * A response body as text, stopping at `maxBytes`: with `truncate` the rest is dropped
 * (error bodies), otherwise the reply is refused (an endless body must not exhaust dl).
 */
export async function readBodyCapped(res: Response, maxBytes: number, truncate: boolean): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        if (!truncate) throw new BodyTooLargeError(maxBytes);
        chunks.push(value.subarray(0, value.byteLength - (size - maxBytes)));
        await reader.cancel().catch(() => {});
        break;
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks).toString("utf8");
}

export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  constructor(readonly maxBytes: number) {
    super(`the reply exceeded ${maxBytes} bytes`);
  }
}

function adviceFor(status: number): string {
  if (status >= 300 && status < 400)
    return "the endpoint redirected elsewhere; dl never follows redirects to a model backend (they could carry the key to another host), so configure the final URL";
  if (status === 401 || status === 403)
    return "check the API key configured for this backend (DELEGATE_LOCAL_KEY or the provider key) and that it may use this model";
  if (status === 404) return "check the base URL and that the backend serves this model alias";
  if (status === 408 || status === 413) return "the request was too large or too slow; reduce the task or context size";
  if (status === 429) return "the backend is rate limiting; wait, lower concurrency (pools), or pick another model";
  if (status >= 500) return "the backend or its upstream failed; try again later or pick another model";
  return "the backend rejected the request; fix the request (model name, max_tokens, message shape) rather than retrying";
}

export function httpError(ep: Endpoint, model: string, status: number, body: string, retryAfterMs?: number): DlError {
  const host = safeHost(ep.url);
  const excerpt = sanitizeExcerpt(body);
  const msg =
    `${ep.format} backend at ${host} answered HTTP ${status} for model ${model}` +
    (excerpt ? `: ${excerpt}` : "") +
    `. Next: ${adviceFor(status)}.`;
  const data: BackendErrorData = { host, status, retryable: RETRYABLE_STATUSES.has(status) };
  if (retryAfterMs !== undefined) data.retryAfterMs = retryAfterMs;
  return new DlError("backend", msg, data);
}

/** A stream that ended or broke before its final event: retryable. */
export function streamCutError(ep: Endpoint, model: string, detail: string): DlError {
  const host = safeHost(ep.url);
  const data: BackendErrorData = { host, retryable: true };
  return new DlError(
    "backend",
    `${ep.format} stream from ${host} for model ${model} ended early (${detail}). Next: retry; if it keeps happening set DELEGATE_STREAMING=0 or check the proxy's timeouts.`,
    data,
  );
}

/** The backend sent something we cannot read (bad JSON, error event): not retryable unless overloaded. */
export function protocolError(ep: Endpoint, model: string, detail: string, retryable = false): DlError {
  const host = safeHost(ep.url);
  const data: BackendErrorData = { host, retryable };
  return new DlError(
    "backend",
    `${ep.format} backend at ${host} sent an unusable reply for model ${model}: ${sanitizeExcerpt(detail)}. Next: ${retryable ? "retry later" : `check that the URL points at a ${ep.format}-format endpoint`}.`,
    data,
  );
}

const RESET_CODES = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT", "ConnectionClosed", "UND_ERR_SOCKET"]);

/** fetch's codes for a compressed body it could not inflate (gzip, deflate, brotli, zstd). */
const DECOMPRESS_CODE = /zlib|brotli|zstd|decompress/i;

/**
 * A reply whose Content-Encoding does not match its bytes: the backend was reached and
 * answered, so "could not reach" would send the user looking in the wrong place.
 */
export function decompressionError(ep: Endpoint, model: string, e: unknown): DlError | undefined {
  const code = String((e as { code?: unknown })?.code ?? "");
  if (!DECOMPRESS_CODE.test(code)) return undefined;
  const host = safeHost(ep.url);
  return new DlError(
    "backend",
    `${ep.format} backend at ${host} answered for model ${model}, but its compressed body could not be decompressed (${code.slice(0, 40)}): the Content-Encoding header does not match the bytes. Next: check the proxy in front of the backend (it may compress twice or cut the body), or retry.`,
    { host, retryable: false } satisfies BackendErrorData,
  );
}

/** Network failure from fetch or from reading the body. Resets are retried; refusals are not. */
export function networkError(ep: Endpoint, model: string, e: unknown): DlError {
  const undecodable = decompressionError(ep, model, e);
  if (undecodable) return undecodable;
  const host = safeHost(ep.url);
  const code = String((e as { code?: unknown })?.code ?? "");
  if (RESET_CODES.has(code)) {
    return new DlError(
      "backend",
      `connection to ${host} for model ${model} was reset (${code}). Next: retry; check the backend's health if it persists.`,
      {
        host,
        retryable: true,
      } satisfies BackendErrorData,
    );
  }
  const what = code || (e instanceof Error ? e.name : "error");
  return new DlError(
    "backend",
    `could not reach the ${ep.format} backend at ${host} for model ${model} (${what.slice(0, 40)}). Next: check that the server is running and that its URL is right.`,
    { host, retryable: false } satisfies BackendErrorData,
  );
}
