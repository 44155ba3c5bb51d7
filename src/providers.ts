/**
 * Every job provider, once, as the facts every layer may read without loading any
 * provider's code: its name (what `dl wait` prints and the tools are named after:
 * submit_<name>, poll_<name>, cancel_<name>), its job id prefix, where its job store
 * lives (the default under $HOME and the variable that moves it; the defaults are the
 * reference's, so the predecessor's users find their jobs where they expect), and the
 * few flags that change how the engine, the ledger and the shell treat its jobs.
 *
 * The code of a provider is its folder's module (src/jobs/providers/<name>/index.ts),
 * listed in PROVIDER_MODULES (src/jobs/providers/index.ts) under the same name; the
 * compiler refuses a row here without its module there. Plain data, so config.ts and the
 * store can read it from below the engine.
 */
export interface ProviderFacts {
  readonly name: string;
  /** Job ids are this prefix and 10 hex digits. */
  readonly idPrefix: string;
  /** Its state dir under $HOME, unless `stateEnv` moves it. */
  readonly homeDir: string;
  readonly stateEnv: string;
  /** For people, in tool titles and the submit line. */
  readonly label: string;
  /** Its CLI counts cached tokens inside the input (OpenAI's accounting): the ledger takes them out. */
  readonly cachedInsideInput?: boolean;
  /**
   * A running job cannot outlive its server as a run (Gemini's agy: the jail dies with it),
   * so a dead server's running job reads `killed_on_restart`, not `lost`.
   */
  readonly diesWithServer?: boolean;
  /** Its store also keeps synchronous delegations: their usage rows and transcripts. */
  readonly keepsDelegations?: boolean;
  /** Its job writes its transcript step by step while it runs (dl logs --follow shows each step as it ends). */
  readonly stepsWhileRunning?: boolean;
}

export const PROVIDERS = [
  {
    name: "codex",
    idPrefix: "cx-",
    homeDir: ".codex-jobs",
    stateEnv: "DELEGATE_CODEX_STATE_DIR",
    label: "Codex",
    cachedInsideInput: true,
  },
  {
    name: "gemini",
    idPrefix: "gm-",
    homeDir: ".gemini-jobs",
    stateEnv: "DELEGATE_GEMINI_STATE_DIR",
    label: "Gemini (agy)",
    cachedInsideInput: true,
    diesWithServer: true,
  },
  {
    name: "dsh",
    idPrefix: "dsh-",
    homeDir: ".dsh-jobs",
    stateEnv: "DELEGATE_DSH_STATE_DIR",
    label: "dsh",
  },
  {
    name: "agent",
    idPrefix: "ag-",
    homeDir: ".agent-jobs",
    stateEnv: "DELEGATE_AGENT_STATE_DIR",
    label: "agent",
    keepsDelegations: true,
    stepsWhileRunning: true,
  },
] as const satisfies readonly ProviderFacts[];

export type ProviderName = (typeof PROVIDERS)[number]["name"];

/** The entry of one provider. */
export function providerEntry<K extends ProviderName>(name: K): Extract<(typeof PROVIDERS)[number], { name: K }> {
  return PROVIDERS.find((p) => p.name === name) as Extract<(typeof PROVIDERS)[number], { name: K }>;
}

/** The facts of a provider named in a row or a store, if it is one of ours. */
export function factsOf(name: string): ProviderFacts | undefined {
  return (PROVIDERS as readonly ProviderFacts[]).find((p) => p.name === name);
}

/** The provider whose store keeps synchronous delegations (their usage and transcripts). */
export const DELEGATIONS_PROVIDER: ProviderName = PROVIDERS.find((p) => "keepsDelegations" in p)!.name;
