/** The backends API the agent loop, dispatch and gateway rules call. */
export { complete, DEFAULT_ROUTING_HEADER_PREFIXES, type CompleteOptions, type FetchFn } from "./client.ts";
export { cachingAllowedFor, endpointFor, endpointUrl, formatForModel, resendReasoningFor, safeHost, type EndpointInput, type ResendReasoningMode } from "./route.ts";
export { DEFAULT_RETRY_POLICY, realClock, withRetry, type Clock, type RetryInfo, type RetryPolicy } from "./retry.ts";
export { guardProviderUrl, type SsrfOptions, type LookupFn } from "./ssrf.ts";
export { INVALID_TOOL_INPUT, hasToolUse, toolInputError } from "./tool-input.ts";
export type { BackendErrorData } from "./http.ts";
export * from "./types.ts";
