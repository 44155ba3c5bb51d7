/** The backends API the agent loop, dispatch and gateway rules call. */
export { type CompleteOptions, complete, DEFAULT_ROUTING_HEADER_PREFIXES, type FetchFn } from "./client.ts";
export type { BackendErrorData } from "./http.ts";
export { type Clock, DEFAULT_RETRY_POLICY, type RetryInfo, type RetryPolicy, realClock, withRetry } from "./retry.ts";
export {
  cachingAllowedFor,
  type EndpointInput,
  endpointFor,
  endpointUrl,
  formatForModel,
  type ResendReasoningMode,
  resendReasoningFor,
  safeHost,
} from "./route.ts";
export { guardProviderUrl, type LookupFn, type SsrfOptions } from "./ssrf.ts";
export { hasToolUse, INVALID_TOOL_INPUT, toolInputError } from "./tool-input.ts";
export * from "./types.ts";
