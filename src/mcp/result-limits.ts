/**
 * Sizes that bound what crosses dl's MCP stdio, in one place (the README's safety section
 * states them). A 10 MB model answer once became a 21 MB reply (text plus structured
 * copy) and both the SDK client and Claude Code dropped the connection.
 */

/** Longest agent answer kept in a structured result; the rest is on disk. */
export const ANSWER_MAX_CHARS = 100_000;
/** Longest `error` text in a result (dl writes them; this only guards against surprises). */
export const ERROR_MAX_CHARS = 8_000;
/** Longest text part of a tool result: a short rendering, never a second full copy. */
export const TEXT_MAX_CHARS = 16_000;
/** How much of the answer the text part shows; the structured result has more. */
export const TEXT_ANSWER_PREVIEW_CHARS = 4_000;
/** One stdin line (one JSON-RPC message) `dl serve` accepts; longer ones get an error. */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
