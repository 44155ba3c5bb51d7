import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import { log } from "../../../log.ts";
import type { QueueReason } from "../../../store/types.ts";
import { readChildFileSync } from "../../../sys/child-file.ts";
import { BACKOFF_S, backoffMs } from "../../engine/backoff.ts";
import { type SharedState, SharedStateFile } from "./shared-state.ts";

export type { SharedState } from "./shared-state.ts";

/**
 * The state of the ChatGPT account every Codex job bills against, shared by every server
 * on one state dir through `shared.json` (rewritten atomically under `shared.lock`):
 *
 * - a throttle (429) sets a cooldown that holds back every admission, on every server;
 * - three throttles within 5 minutes halve the global cap for 10 minutes (`adaptive_cap`);
 * - an auth failure pauses admission until `CODEX_HOME/auth.json` changes (a new login).
 *
 * It lives in a file rather than the job store because it is one small record about the
 * account, not about jobs, and `dl status` can read it without opening SQLite. This class
 * is the policy; shared-state.ts is the storage (cache, locking, atomic rewrite).
 */

export interface AccountOptions {
  stateDir: string;
  codexHome: string;
  now?: () => number;
  random?: () => number;
  /** Backoff steps in seconds (default 5/10/20/40/60); tests pass small ones. */
  backoffS?: readonly number[];
  throttleWindowMs?: number;
  throttleLimit?: number;
  adaptiveMs?: number;
}

export interface AccountView {
  state: "ok" | "cooldown" | "auth_failed";
  cooldown_until: string | null;
  retry_in_s: number | null;
  cooldown_reason: string | null;
  adaptive_cap: boolean;
  adaptive_until: string | null;
  recent_throttles: number;
  effective_caps: { global: number; per_project: number };
  auth_hint?: string;
}

/** A login file is a few KiB; a larger one is not fingerprinted, it reads as unreadable. */
const AUTH_MAX_BYTES = 1024 * 1024;

export class CodexAccount {
  readonly file: string;
  private readonly shared: SharedStateFile;
  private readonly authFile: string;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly backoffS: readonly number[];
  private readonly windowMs: number;
  private readonly limit: number;
  private readonly adaptiveMs: number;
  private authCache: { key: string; fp: string } | null = null;

  constructor(o: AccountOptions) {
    this.now = o.now ?? Date.now;
    this.shared = new SharedStateFile(o.stateDir, this.now);
    this.file = this.shared.file;
    this.authFile = join(o.codexHome, "auth.json");
    this.random = o.random ?? Math.random;
    this.backoffS = o.backoffS ?? BACKOFF_S;
    this.windowMs = o.throttleWindowMs ?? 5 * 60_000;
    this.limit = o.throttleLimit ?? 3;
    this.adaptiveMs = o.adaptiveMs ?? 10 * 60_000;
  }

  /** Current shared state (see SharedStateFile.read: a corrupt file reads as a short cooldown). */
  read(): SharedState {
    return this.shared.read();
  }

  /**
   * Records a throttle seen by any job and returns how long the account now cools down.
   * `attempt` is the job's retry number (1-based); the step also grows with throttles
   * other jobs met in the window, since they all hit one account.
   */
  recordThrottle(attempt: number, hintMs: number | null, reason = "throttled (HTTP 429)"): number {
    let delay = 0;
    this.shared.update((s, now) => {
      s.throttles = [...s.throttles.filter((t) => now - t < this.windowMs), now];
      const step = Math.max(attempt, s.throttles.length);
      const base = backoffMs(step, this.backoffS);
      delay = hintMs !== null ? hintMs * (1 + 0.1 * this.random()) : base * (0.8 + 0.4 * this.random());
      delay = Math.round(delay);
      s.cooldown_until = Math.max(s.cooldown_until ?? 0, now + delay);
      s.cooldown_reason = reason;
      if (s.throttles.length >= this.limit) s.adaptive_until = now + this.adaptiveMs;
    });
    return delay;
  }

  /** A login failed: admission pauses until auth.json differs from what it is now. */
  recordAuthFailure(): void {
    const fingerprint = this.authFingerprint();
    this.shared.update((s, now) => {
      s.auth = { at: now, fingerprint };
    });
  }

  /** What the engine's `gate` hook returns: why nothing may start now, or null. */
  gate(): QueueReason | null {
    const s = this.read();
    if (s.auth) {
      if (this.authFingerprint() === s.auth.fingerprint) return "auth_failed";
      const seen = s.auth.fingerprint;
      this.shared.update((st) => {
        if (st.auth?.fingerprint === seen) st.auth = null;
      });
      log.info("codex: auth.json changed; admission resumes");
    }
    if (s.cooldown_until !== null && s.cooldown_until > this.now()) return "throttle_cooldown";
    return null;
  }

  /** The engine's `effectiveCap` / `effectiveProjectCap` hooks: half a cap while adaptive_cap holds, else null. */
  effectiveCap(maxConcurrent: number): number | null {
    const s = this.read();
    if (s.adaptive_until === null || s.adaptive_until <= this.now()) return null;
    return Math.max(1, Math.floor(maxConcurrent / 2));
  }

  /** The engine's `retryDelayMs` hook: the account's cooldown, else the plain backoff. */
  retryDelayMs(n: number): number {
    const left = (this.read().cooldown_until ?? 0) - this.now();
    if (left > 0) return left;
    return backoffMs(n, this.backoffS);
  }

  view(maxConcurrent: number, maxPerProject: number): AccountView {
    const now = this.now();
    const gate = this.gate();
    const s = this.read();
    const cap = this.effectiveCap(maxConcurrent) ?? maxConcurrent;
    const projectCap = Math.min(cap, this.effectiveCap(maxPerProject) ?? maxPerProject);
    const cooling = s.cooldown_until !== null && s.cooldown_until > now;
    const adaptive = s.adaptive_until !== null && s.adaptive_until > now;
    const v: AccountView = {
      state: gate === "auth_failed" ? "auth_failed" : cooling ? "cooldown" : "ok",
      cooldown_until: cooling ? new Date(s.cooldown_until!).toISOString() : null,
      retry_in_s: cooling ? Math.round((s.cooldown_until! - now) / 100) / 10 : null,
      cooldown_reason: cooling ? s.cooldown_reason : null,
      adaptive_cap: adaptive,
      adaptive_until: adaptive ? new Date(s.adaptive_until!).toISOString() : null,
      recent_throttles: s.throttles.filter((t) => now - t < this.windowMs).length,
      // Both caps halve while adaptive_cap holds; a project never gets more than the global pool.
      effective_caps: { global: cap, per_project: projectCap },
    };
    if (gate === "auth_failed")
      v.auth_hint = "the Codex login failed: run `codex login`; admission resumes by itself once auth.json changes";
    return v;
  }

  /** Changes when a login rewrites auth.json (content hash, so a copy-back counts too). */
  private authFingerprint(): string {
    let key: string;
    try {
      const st = statSync(this.authFile);
      key = `${st.ino}:${st.mtimeMs}:${st.size}`;
    } catch {
      return "missing";
    }
    if (this.authCache?.key === key) return this.authCache.fp;
    // Codex itself rewrites auth.json (token refresh): read like any file a child wrote.
    const read = readChildFileSync(this.authFile, AUTH_MAX_BYTES);
    const fp = read.ok ? createHash("sha256").update(read.text).digest("hex").slice(0, 32) : "unreadable";
    this.authCache = { key, fp };
    return fp;
  }
}
