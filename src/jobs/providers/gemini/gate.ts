import { DlError } from "../../../errors.ts";

/**
 * The Gemini tools' gate, decided here once from the Config: `agy -p` cannot ask before
 * it acts and runs with --dangerously-skip-permissions, so nothing Gemini runs unless the
 * user said so. src/services.ts refuses to start the service, tool availability leaves
 * the tools out and `dl status` shows it off, all from this one answer.
 */
const GEMINI_GATE_REFUSAL =
  "the Gemini tools are off: `agy -p` cannot ask for permission and runs with --dangerously-skip-permissions (inside a jail, but it still edits the workdir freely and uploads what it reads to Google). The user must set DELEGATE_GEMINI_ALLOW_DANGER=1 in the MCP server's environment to allow them; nothing was run";

/** The refusal every Gemini entry point answers under this Config, or null when allowed. */
export function geminiRefusal(c: { readonly gemini: { readonly allowDanger: boolean } }): DlError | null {
  return c.gemini.allowDanger
    ? null
    : new DlError("bad_config", GEMINI_GATE_REFUSAL, { failure_kind: "gemini_not_allowed" });
}
