import { randomUUID } from "node:crypto";
import type { ProviderTarget } from "../../../dispatch/provider-endpoint.ts";
import { DlError } from "../../../errors.ts";

/**
 * The endpoints (URL, key, format) of queued delegate_to_provider jobs, in this server's
 * memory only. A key must never reach the job store, a file, argv, a log or a result, so
 * the row keeps a random reference and the launch hands the target to the child `dl run`
 * through its environment (DELEGATE_RUN_PROVIDER_*). A server that stopped before the
 * launch took its keys with it: the job then fails saying so, and nothing runs.
 */
export class ProviderEndpoints {
  private readonly byRef = new Map<string, ProviderTarget>();

  /**
   * `handed`: the one endpoint this process was given (DELEGATE_RUN_PROVIDER_*). A job's
   * supervisor gets its job's endpoint from the server that queued it that way, and runs
   * only that job.
   */
  constructor(private readonly handed: ProviderTarget | null = null) {}

  /** Keeps the target until its job launches; the reference goes into the job's params. */
  put(t: ProviderTarget): string {
    const ref = randomUUID();
    this.byRef.set(ref, { ...t });
    return ref;
  }

  /** For a submit that was refused: its job never launches. */
  drop(ref: string): void {
    this.byRef.delete(ref);
  }

  /** The environment that hands the endpoint of `ref` on (to the job's supervisor), once; empty when not held here. */
  handOffEnv(ref: string): Record<string, string> {
    const t = this.byRef.get(ref);
    this.byRef.delete(ref);
    return t ? targetEnv(t) : {};
  }

  /** The child's environment for the job's endpoint, once; throws when this server never had it or lost it. */
  takeEnv(ref: string, jobId: string): Record<string, string> {
    const t = this.byRef.get(ref) ?? this.handed;
    this.byRef.delete(ref);
    if (!t) {
      throw new DlError(
        "not_found",
        `job ${jobId} was queued by delegate_to_provider, whose provider key lives only in the memory of the server that queued it; that server stopped before the job started, so nothing ran. Call delegate_to_provider again`,
        { failure_kind: "provider_key_lost" },
      );
    }
    return targetEnv(t);
  }
}

function targetEnv(t: ProviderTarget): Record<string, string> {
  return {
    DELEGATE_RUN_PROVIDER_URL: t.url,
    DELEGATE_RUN_PROVIDER_KEY: t.apiKey,
    DELEGATE_RUN_PROVIDER_FORMAT: t.format ?? "auto",
  };
}
