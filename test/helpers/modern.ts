/**
 * Raw 2026-07-28 framing for tests that write JSON-RPC lines to `dl serve` themselves:
 * that revision has no handshake, and every request carries the protocol version and
 * the client's facts in `_meta`.
 */
export const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A 2026-07-28 request line's object: `params` gets the `_meta` envelope. */
export function modernRequest(id: number | string, method: string, params: Record<string, unknown> = {}) {
  return { jsonrpc: "2.0", id, method, params: { ...params, _meta: MODERN_META } };
}
