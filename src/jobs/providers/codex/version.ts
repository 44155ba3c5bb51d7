import { isAbsolute } from "node:path";
import { DlError, describeError } from "../../../errors.ts";
import { runGroup } from "../../../sys/process.ts";

/** gpt-6.1-terra (the default since 2026-10-26) needs this CLI or newer. */
const CODEX_MIN_VERSION = "0.164.0";

export type CodexVersionStatus =
  | { ok: true; version: string; path: string }
  | { ok: false; reason: "missing" | "too_old" | "unreadable"; version: string | null; message: string };

/** "codex-cli 0.171.0" (also a bare "0.171.0", with optional pre-release). */
export function parseCodexVersion(text: string): string | null {
  const m = /(?:^|\s|v)(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?:\s|$)/m.exec(text);
  return m?.[1] ?? null;
}

/** True when `version` is at least `min`. Pre-releases of the minimum count as too old. */
export function versionAtLeast(version: string, min = CODEX_MIN_VERSION): boolean {
  return Bun.semver.order(version, min) >= 0;
}

const UPGRADE = "upgrade it yourself (`npm i -g @openai/codex@latest` or your package manager); dl never upgrades it";

/**
 * Runs `<bin> --version` once. Never throws: a missing or old CLI is a status the server
 * reports (and the Codex tools refuse with), not a reason for the server not to start.
 */
export async function probeCodexVersion(
  bin: string,
  env: Readonly<Record<string, string>>,
  timeoutMs = 15_000,
): Promise<CodexVersionStatus> {
  // `--version` reads no folder: run it in one that always exists. (The state dir, used
  // before, does not exist on a fresh machine, and the spawn then failed as ENOENT.)
  const cwd = "/";
  const path = isAbsolute(bin) ? bin : Bun.which(bin, { PATH: env.PATH ?? "" });
  if (!path) {
    return {
      ok: false,
      reason: "missing",
      version: null,
      message: `the Codex CLI (${bin}) was not found on PATH; install it (npm i -g @openai/codex) or set DELEGATE_CODEX_BIN to its path`,
    };
  }
  let out: string;
  try {
    const r = await runGroup({ argv: [path, "--version"], env, cwd, timeoutMs, stdoutCap: 4096, stderrCap: 4096 });
    out = `${r.stdout.text()}\n${r.stderr.text()}`;
    if (r.timedOut || r.exitCode !== 0) {
      return {
        ok: false,
        reason: "unreadable",
        version: null,
        message: `\`${bin} --version\` ${r.timedOut ? "timed out" : `exited ${r.exitCode ?? r.signal}`}; check the Codex CLI install or DELEGATE_CODEX_BIN`,
      };
    }
  } catch (e) {
    return {
      ok: false,
      reason: "missing",
      version: null,
      message: `the Codex CLI (${bin}) could not be started: ${describeError(e)}; check DELEGATE_CODEX_BIN`,
    };
  }
  const version = parseCodexVersion(out);
  if (!version) {
    return {
      ok: false,
      reason: "unreadable",
      version: null,
      message: `could not read a version from \`${bin} --version\`; check the Codex CLI install or DELEGATE_CODEX_BIN`,
    };
  }
  if (!versionAtLeast(version)) {
    return {
      ok: false,
      reason: "too_old",
      version,
      message: `codex-cli ${version} is too old: dl needs ${CODEX_MIN_VERSION} or newer for the current models; ${UPGRADE}`,
    };
  }
  return { ok: true, version, path };
}

/**
 * Caches a good probe for the life of the server; a failed one is probed again on the
 * next use, so installing or upgrading the CLI needs no restart.
 */
export class CodexVersionGate {
  private good: CodexVersionStatus | null = null;
  private pending: Promise<CodexVersionStatus> | null = null;

  constructor(private readonly probe: () => Promise<CodexVersionStatus>) {}

  async status(): Promise<CodexVersionStatus> {
    if (this.good) return this.good;
    this.pending ??= this.probe().finally(() => (this.pending = null));
    const s = await this.pending;
    if (s.ok) this.good = s;
    return s;
  }

  /** The last good probe, without running anything (for status displays). */
  get cached(): CodexVersionStatus | null {
    return this.good;
  }

  /** Throws DlError "not_found" / "bad_config" with what to do when the CLI is unusable. */
  async require(): Promise<string> {
    const s = await this.status();
    if (s.ok) return s.path;
    throw new DlError(s.reason === "missing" ? "not_found" : "bad_config", s.message, {
      reason: s.reason,
      version: s.version,
    });
  }
}
