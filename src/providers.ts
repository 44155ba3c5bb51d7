/**
 * Every job provider, once: its name (what `dl wait` prints and the tools are named
 * after: submit_<name>, poll_<name>, cancel_<name>), its job id prefix, and where its job
 * store lives (the default under $HOME and the variable that moves it; the defaults are
 * the reference's, so the predecessor's users find their jobs where they expect). Every
 * place that enumerates providers — the state paths, the services, `dl serve` and its
 * `--check`, `dl status`, MCP tasks — reads this list. Plain data, so config.ts can read
 * it without loading any provider's code; src/services.ts JOB_SERVICES (keyed by these
 * names, checked complete by the compiler) says how each one's module is loaded.
 */
export const PROVIDERS = [
  {
    name: "codex",
    idPrefix: "cx-",
    homeDir: ".codex-jobs",
    stateEnv: "DELEGATE_CODEX_STATE_DIR",
  },
  {
    name: "gemini",
    idPrefix: "gm-",
    homeDir: ".gemini-jobs",
    stateEnv: "DELEGATE_GEMINI_STATE_DIR",
  },
  {
    name: "dsh",
    idPrefix: "dsh-",
    homeDir: ".dsh-jobs",
    stateEnv: "DELEGATE_DSH_STATE_DIR",
  },
  {
    name: "agent",
    idPrefix: "ag-",
    homeDir: ".agent-jobs",
    stateEnv: "DELEGATE_AGENT_STATE_DIR",
  },
] as const;

export type ProviderName = (typeof PROVIDERS)[number]["name"];

/** The entry of one provider. */
export function providerEntry(name: ProviderName): (typeof PROVIDERS)[number] {
  return PROVIDERS.find((p) => p.name === name)!;
}
