import { DlError } from "../../../errors.ts";

/**
 * The Gemini tools' gate: `agy -p` cannot ask before it acts and runs with
 * --dangerously-skip-permissions, so nothing Gemini runs unless the user said so.
 */
const GEMINI_GATE_REFUSAL =
  "the Gemini tools are off: `agy -p` cannot ask for permission and runs with --dangerously-skip-permissions (inside a jail, but it still edits the workdir freely and uploads what it reads to Google). The user must set DELEGATE_GEMINI_ALLOW_DANGER=1 in the MCP server's environment to allow them; nothing was run";

export function requireGeminiAllowed(allowDanger: boolean): void {
  if (!allowDanger) throw new DlError("bad_config", GEMINI_GATE_REFUSAL, { failure_kind: "gemini_not_allowed" });
}
