/**
 * `complete()`: one model turn against one endpoint, whatever its wire format, with the
 * retry policy, the caller's AbortSignal and an optional per-turn deadline. The reply is
 * always Anthropic-style blocks plus normalized usage, the answering model and routing
 * headers.
 */
import { isDlError } from "../errors.ts";
import { AnthropicStream, anthropicPayload, type ParsedReply, parseAnthropicJson } from "./anthropic.ts";
import {
  BodyTooLargeError,
  decompressionError,
  ERROR_BODY_MAX_BYTES,
  httpError,
  JSON_BODY_MAX_BYTES,
  networkError,
  parseRetryAfter,
  pickHeaders,
  protocolError,
  readBodyCapped,
  requestHeaders,
  streamCutError,
} from "./http.ts";
import { OpenaiStream, openaiPayload, parseOpenaiJson } from "./openai.ts";
import {
  type Clock,
  cancelledError,
  deadlineError,
  type RetryInfo,
  type RetryPolicy,
  realClock,
  withRetry,
} from "./retry.ts";
import { readSse, SseLimitError } from "./sse.ts";
import type { ModelRequest, ModelResponse } from "./types.ts";
import { WireShapeError } from "./wire-index.ts";

type FetchFn = (url: string, init: RequestInit) => Promise<Response>;

export type CompleteOptions = {
  fetch?: FetchFn;
  clock?: Clock;
  retry?: Partial<RetryPolicy>;
  /** Wall-clock budget for the whole turn, retries included (real time). */
  turnTimeoutMs?: number;
  /** Response headers copied into ModelResponse.routing. */
  routingHeaderPrefixes?: readonly string[];
  onRetry?: (info: RetryInfo) => void;
};

const DEFAULT_ROUTING_HEADER_PREFIXES: readonly string[] = ["x-bifrost-routing-info-"];

/** Error events in a stream that mean "try again" rather than "your request is wrong". */
const RETRYABLE_STREAM_ERRORS = new Set([
  "overloaded_error",
  "rate_limit_error",
  "api_error",
  "server_error",
  "timeout",
]);

export async function complete(req: ModelRequest, opts: CompleteOptions = {}): Promise<ModelResponse> {
  const clock = opts.clock ?? realClock;
  const deadline = opts.turnTimeoutMs !== undefined ? AbortSignal.timeout(opts.turnTimeoutMs) : undefined;
  const signal = deadline ? AbortSignal.any([req.signal, deadline]) : req.signal;
  const turn: Turn = {
    req,
    doFetch: opts.fetch ?? ((url, init) => fetch(url, init)),
    // Cached per-message encodings: the same bytes as JSON.stringify of the body objects.
    payload: req.endpoint.format === "openai" ? openaiPayload(req) : anthropicPayload(req),
    headers: requestHeaders(req.endpoint),
    signal,
    deadline,
    turnTimeoutMs: opts.turnTimeoutMs,
    prefixes: opts.routingHeaderPrefixes ?? DEFAULT_ROUTING_HEADER_PREFIXES,
    routing: {},
  };
  const retryOpts: Parameters<typeof withRetry>[1] = { signal, clock };
  if (opts.retry) retryOpts.policy = opts.retry;
  if (opts.onRetry) retryOpts.onRetry = opts.onRetry;
  if (opts.turnTimeoutMs !== undefined) retryOpts.deadlineAt = clock.now() + opts.turnTimeoutMs;
  try {
    const { value, retries } = await withRetry(() => attempt(turn), retryOpts);
    return { ...value, routing: turn.routing, retries };
  } catch (e) {
    // withRetry sees the combined signal; say which of the two fired.
    if (isDlError(e, "cancelled") && !req.signal.aborted && deadline?.aborted) {
      throw deadlineError(budgetText(opts.turnTimeoutMs));
    }
    throw e;
  }
}

/** One turn's fixed request and the routing headers of its latest attempt. */
type Turn = {
  req: ModelRequest;
  doFetch: FetchFn;
  payload: string;
  headers: Record<string, string>;
  /** The caller's signal combined with the turn deadline. */
  signal: AbortSignal;
  deadline: AbortSignal | undefined;
  turnTimeoutMs: number | undefined;
  prefixes: readonly string[];
  routing: Record<string, string>;
};

/** One HTTP attempt; every failure comes out as a DlError withRetry can classify. */
async function attempt(turn: Turn): Promise<ParsedReply> {
  const { req } = turn;
  try {
    // Never follow a redirect: it would carry the key and the task to a host no guard checked.
    const res = await turn.doFetch(req.endpoint.url, {
      method: "POST",
      headers: turn.headers,
      body: turn.payload,
      signal: turn.signal,
      redirect: "manual",
    });
    turn.routing = pickHeaders(res.headers, turn.prefixes);
    if (!res.ok) throw await failedResponse(req, res);
    const ctype = res.headers.get("content-type") ?? "";
    if (ctype.includes("text/event-stream") && res.body) return await readStream(req, res.body);
    return await readJson(req, res, ctype);
  } catch (e) {
    if (req.signal.aborted) throw cancelledError();
    if (turn.deadline?.aborted) throw deadlineError(budgetText(turn.turnTimeoutMs));
    if (isDlError(e)) throw e;
    if (e instanceof BodyTooLargeError || e instanceof SseLimitError)
      throw protocolError(req.endpoint, req.model, e.message);
    throw networkError(req.endpoint, req.model, e);
  }
}

/** The error for a non-2xx reply: its status, body (or redirect target) and Retry-After. */
async function failedResponse(req: ModelRequest, res: Response): Promise<Error> {
  const text = await readBodyCapped(res, ERROR_BODY_MAX_BYTES, true).catch(() => "");
  const where =
    res.status >= 300 && res.status < 400 ? redirectTarget(res.headers.get("location"), req.endpoint.url) : "";
  return httpError(
    req.endpoint,
    req.model,
    res.status,
    where || text,
    parseRetryAfter(res.headers.get("retry-after"), Date.now()),
  );
}

async function readJson(req: ModelRequest, res: Response, ctype: string): Promise<ParsedReply> {
  const text = await readBodyCapped(res, JSON_BODY_MAX_BYTES, false);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw protocolError(
      req.endpoint,
      req.model,
      `expected JSON, got ${ctype || "no content-type"} starting with ${JSON.stringify(text.slice(0, 400))}`,
    );
  }
  if (!json || typeof json !== "object")
    throw protocolError(req.endpoint, req.model, "the JSON reply is not an object");
  const obj = json as Record<string, unknown>;
  return req.endpoint.format === "openai" ? parseOpenaiJson(obj) : parseAnthropicJson(obj);
}

async function readStream(req: ModelRequest, body: ReadableStream<Uint8Array>): Promise<ParsedReply> {
  const state = req.endpoint.format === "openai" ? new OpenaiStream() : new AnthropicStream();
  try {
    await readSse(body, (event, data) => {
      try {
        state.onEvent(event, data);
      } catch (e) {
        if (e instanceof SyntaxError)
          throw protocolError(req.endpoint, req.model, `an SSE event is not JSON: ${data.slice(0, 80)}`);
        if (e instanceof WireShapeError) throw protocolError(req.endpoint, req.model, e.message);
        throw e;
      }
    });
  } catch (e) {
    if (isDlError(e)) throw e;
    if (e instanceof SseLimitError) throw protocolError(req.endpoint, req.model, e.message);
    if (req.signal.aborted) throw cancelledError();
    const undecodable = decompressionError(req.endpoint, req.model, e);
    if (undecodable) throw undecodable;
    // A read that fails after some events is a cut stream whatever the socket error.
    throw streamCutError(req.endpoint, req.model, describeRead(e));
  }
  if (state.error) {
    const { type, message } = state.error;
    throw protocolError(req.endpoint, req.model, `error event ${type}: ${message}`, RETRYABLE_STREAM_ERRORS.has(type));
  }
  if (!state.done) throw streamCutError(req.endpoint, req.model, "no final event");
  return state.result();
}

function describeRead(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  return typeof code === "string" ? code.slice(0, 30) : e instanceof Error ? e.name : "read error";
}

function budgetText(ms: number | undefined): string {
  const v = ms ?? 0;
  return v < 10_000 ? `${v} ms per turn` : `${Math.round(v / 1000)} s per turn`;
}

/** Where a redirect pointed, as host only (no path, query or credentials). */
function redirectTarget(location: string | null, base: string): string {
  if (!location) return "redirect without a Location header";
  try {
    return `redirect to ${new URL(location, base).host || "(no host)"}`;
  } catch {
    return "redirect to an unparsable Location";
  }
}
