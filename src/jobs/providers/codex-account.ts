import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../errors.ts";
import { log } from "../../log.ts";
import type { QueueReason } from "../../store/types.ts";
import { tryLock, type LockHandle } from "../../sys/flock.ts";

/**
 * The state of the ChatGPT account every Codex job bills against, shared by every server
 * on one state dir through `shared.json` (rewritten atomically under `shared.lock`):
 *
 * - a throttle (429) sets a cooldown that holds back every admission, on every server;
 * - three throttles within 5 minutes halve the global cap for 10 minutes (`adaptive_cap`);
 * - an auth failure pauses admission until `CODEX_HOME/auth.json` changes (a new login).
 *
 * It lives in a file rather than the job store because it is one small record about the
 * account, not about jobs, and `dl status` can read it without opening SQLite.
 */

export interface SharedState {
  v: 1;
  cooldown_until: number | null;
  cooldown_reason: string | null;
  /** Times (ms) of recent throttles, pruned to the throttle window. */
  throttles: number[];
  adaptive_until: number | null;
  auth: { at: number; fingerprint: string } | null;
}

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

const EMPTY: SharedState = { v: 1, cooldown_until: null, cooldown_reason: null, throttles: [], adaptive_until: null, auth: null };
export const DEFAULT_BACKOFF_S = [5, 10, 20, 40, 60] as const;
/**
 * An unreadable shared.json may have held a cooldown or an auth pause: reading it as
 * "all clear" could launch every queued job into a throttled or logged-out account. It
 * holds admission this long instead, and is rewritten sane.
 */
export const UNREADABLE_COOLDOWN_MS = 30_000;
/** Pauses (ms) before retrying an update whose lock another server holds; then it is dropped. */
const LOCK_RETRY_MS = [2, 5, 10, 25, 50, 100, 250, 500, 1000] as const;

/** A state object from the file's text, or null when it is not one we wrote. */
function parseState(text: string): SharedState | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const r = raw as Partial<SharedState>;
  return {
    v: 1,
    cooldown_until: typeof r.cooldown_until === "number" ? r.cooldown_until : null,
    cooldown_reason: typeof r.cooldown_reason === "string" ? r.cooldown_reason : null,
    throttles: Array.isArray(r.throttles) ? r.throttles.filter((t): t is number => typeof t === "number") : [],
    adaptive_until: typeof r.adaptive_until === "number" ? r.adaptive_until : null,
    auth: r.auth && typeof r.auth.fingerprint === "string" && typeof r.auth.at === "number" ? r.auth : null,
  };
}

export class CodexAccount {
  readonly file: string;
  private readonly lockFile: string;
  private readonly authFile: string;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly backoffS: readonly number[];
  private readonly windowMs: number;
  private readonly limit: number;
  private readonly adaptiveMs: number;
  private cache: { key: string; state: SharedState } | null = null;
  private authCache: { key: string; fp: string } | null = null;

  constructor(o: AccountOptions) {
    mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
    this.file = join(o.stateDir, "shared.json");
    this.lockFile = join(o.stateDir, "shared.lock");
    this.authFile = join(o.codexHome, "auth.json");
    this.now = o.now ?? Date.now;
    this.random = o.random ?? Math.random;
    this.backoffS = o.backoffS ?? DEFAULT_BACKOFF_S;
    this.windowMs = o.throttleWindowMs ?? 5 * 60_000;
    this.limit = o.throttleLimit ?? 3;
    this.adaptiveMs = o.adaptiveMs ?? 10 * 60_000;
  }

  /**
   * Current shared state. A missing file is "all clear" (nothing was ever recorded); an
   * unreadable or corrupt one is a short cooldown (UNREADABLE_COOLDOWN_MS), and a corrupt
   * one is rewritten sane so every server agrees.
   */
  read(): SharedState {
    let key: string;
    try {
      const st = statSync(this.file);
      key = `${st.ino}:${st.mtimeMs}:${st.size}`;
    } catch (e) {
      key = (e as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : `stat-failed:${(e as NodeJS.ErrnoException).code}`;
    }
    if (this.cache?.key === key) return this.cache.state;
    if (key === "missing") {
      this.cache = { key, state: { ...EMPTY, throttles: [] } };
      return this.cache.state;
    }
    let text: string | null = null;
    let why = "";
    try {
      if (!key.startsWith("stat-failed")) text = readFileSync(this.file, "utf8");
      else why = key.slice("stat-failed:".length);
    } catch (e) {
      why = describeError(e);
    }
    const parsed = text === null ? null : parseState(text);
    if (parsed) {
      this.cache = { key, state: parsed };
      return parsed;
    }
    const now = this.now();
    const state: SharedState = {
      ...EMPTY,
      throttles: [],
      cooldown_until: now + UNREADABLE_COOLDOWN_MS,
      cooldown_reason: "the shared account state (shared.json) was unreadable; admission holds briefly as a precaution",
    };
    log.warn(`codex: ${this.file} is ${text === null ? `unreadable (${why})` : "corrupt"}; holding admission ${UNREADABLE_COOLDOWN_MS / 1000} s as a precaution and rewriting it`);
    this.cache = { key, state };
    // Rewrite only the file we judged, and only under the lock: a server writing it right
    // now is fixing it anyway.
    if (text !== null) this.write(state, key);
    return state;
  }

  /**
   * Records a throttle seen by any job and returns how long the account now cools down.
   * `attempt` is the job's retry number (1-based); the step also grows with throttles
   * other jobs met in the window, since they all hit one account.
   */
  recordThrottle(attempt: number, hintMs: number | null, reason = "throttled (HTTP 429)"): number {
    let delay = 0;
    this.update((s, now) => {
      s.throttles = [...s.throttles.filter((t) => now - t < this.windowMs), now];
      const step = Math.max(attempt, s.throttles.length);
      const base = (this.backoffS[Math.min(step, this.backoffS.length) - 1] ?? 60) * 1000;
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
    this.update((s, now) => {
      s.auth = { at: now, fingerprint };
    });
  }

  /** What the engine's `gate` hook returns: why nothing may start now, or null. */
  gate(): QueueReason | null {
    const s = this.read();
    if (s.auth) {
      if (this.authFingerprint() === s.auth.fingerprint) return "auth_failed";
      const seen = s.auth.fingerprint;
      this.update((st) => {
        if (st.auth?.fingerprint === seen) st.auth = null;
      });
      log.info("codex: auth.json changed; admission resumes");
    }
    if (s.cooldown_until !== null && s.cooldown_until > this.now()) return "throttle_cooldown";
    return null;
  }

  /** The engine's `effectiveCap` hook: half the cap while adaptive_cap holds, else null. */
  effectiveCap(maxConcurrent: number): number | null {
    const s = this.read();
    if (s.adaptive_until === null || s.adaptive_until <= this.now()) return null;
    return Math.max(1, Math.floor(maxConcurrent / 2));
  }

  /** The engine's `retryDelayMs` hook: the account's cooldown, else the plain backoff. */
  retryDelayMs(n: number): number {
    const left = (this.read().cooldown_until ?? 0) - this.now();
    if (left > 0) return left;
    return (this.backoffS[Math.min(n, this.backoffS.length) - 1] ?? 60) * 1000;
  }

  view(maxConcurrent: number, maxPerProject: number): AccountView {
    const now = this.now();
    const gate = this.gate();
    const s = this.read();
    const cap = this.effectiveCap(maxConcurrent) ?? maxConcurrent;
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
      // The engine lowers only the global pool; a project can never use more than that.
      effective_caps: { global: cap, per_project: Math.min(maxPerProject, cap) },
    };
    if (gate === "auth_failed") v.auth_hint = "the Codex login failed: run `codex login`; admission resumes by itself once auth.json changes";
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
    let fp: string;
    try {
      fp = createHash("sha256").update(readFileSync(this.authFile)).digest("hex").slice(0, 32);
    } catch {
      fp = "unreadable";
    }
    this.authCache = { key, fp };
    return fp;
  }

  /**
   * Read-modify-write under the lock; never throws and never blocks (classify and gate
   * are sync). With the lock busy, the change shows locally at once and is applied to the
   * file on a later turn (LOCK_RETRY_MS), re-read under the lock so no other server's
   * update is overwritten; after the last retry it is dropped with a warning.
   */
  private update(fn: (s: SharedState, now: number) => void, at = this.now(), attempt = 0): void {
    let h: LockHandle | null;
    try {
      h = tryLock(this.lockFile);
    } catch (e) {
      // No server can take this lock (unopenable file, no flock): writing without it is
      // the only way a cooldown reaches the others.
      log.warn(`codex: shared account lock unavailable (${describeError(e)}); updating without it`);
      this.apply(fn, at);
      return;
    }
    if (h) {
      try {
        this.apply(fn, at);
      } finally {
        h.release();
      }
      return;
    }
    if (attempt === 0) {
      // This server acts on the change now (its gate holds a new cooldown at once).
      const local = structuredClone(this.read());
      fn(local, at);
      if (this.cache) this.cache = { key: this.cache.key, state: local };
    }
    const pause = LOCK_RETRY_MS[attempt];
    if (pause === undefined) {
      log.warn(`codex: shared account lock busy for ${LOCK_RETRY_MS.reduce((a, b) => a + b, 0)} ms; this update was not shared with other servers`);
      this.cache = null;
      return;
    }
    const t = setTimeout(() => this.update(fn, at, attempt + 1), pause);
    t.unref?.();
  }

  private apply(fn: (s: SharedState, now: number) => void, at: number): void {
    this.cache = null;
    const s = structuredClone(this.read());
    fn(s, at);
    this.write(s);
  }

  /** Atomic rewrite. With `ifKey`, only if the file is still that version (under the lock). */
  private write(s: SharedState, ifKey?: string): void {
    let h: LockHandle | null = null;
    try {
      if (ifKey !== undefined) {
        h = tryLock(this.lockFile);
        if (!h) return;
        const st = statSync(this.file);
        if (`${st.ino}:${st.mtimeMs}:${st.size}` !== ifKey) return;
      }
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(s), { mode: 0o600 });
      renameSync(tmp, this.file);
      if (ifKey === undefined) this.cache = null;
    } catch (e) {
      log.warn(`codex: could not update the shared account state: ${describeError(e)}`);
    } finally {
      h?.release();
    }
  }
}
