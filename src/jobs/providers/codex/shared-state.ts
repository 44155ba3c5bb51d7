import { statSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../../errors.ts";
import { log } from "../../../log.ts";
import { readChildFileSync } from "../../../sys/child-file.ts";
import { type LockHandle, tryLock } from "../../../sys/flock.ts";
import { privateDir, replacePrivate } from "../../../sys/private-file.ts";

/**
 * `shared.json` and `shared.lock` in a Codex state dir: the one record about the account
 * that every server on that dir reads and rewrites. This file holds only the storage
 * (parse, cache, atomic rewrite, locking); what the fields mean is account.ts.
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

const EMPTY: SharedState = {
  v: 1,
  cooldown_until: null,
  cooldown_reason: null,
  throttles: [],
  adaptive_until: null,
  auth: null,
};
/**
 * An unreadable shared.json may have held a cooldown or an auth pause: reading it as
 * "all clear" could launch every queued job into a throttled or logged-out account. It
 * holds admission this long instead, and is rewritten sane.
 */
const UNREADABLE_COOLDOWN_MS = 30_000;
/** The throttle history is bounded; anything this large was not written by dl. */
const SHARED_MAX_BYTES = 4 * 1024 * 1024;
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

export class SharedStateFile {
  readonly file: string;
  private readonly dir: string;
  private readonly lockFile: string;
  /** The parsed state of one version of the file (ino, mtime, size): admission reads it every pass. */
  private cache: { key: string; state: SharedState } | null = null;

  constructor(
    stateDir: string,
    private readonly now: () => number,
  ) {
    // Created on the first update, not here: `dl status` reads this state and must create nothing.
    this.dir = stateDir;
    this.file = join(stateDir, "shared.json");
    this.lockFile = join(stateDir, "shared.lock");
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
      key =
        (e as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : `stat-failed:${(e as NodeJS.ErrnoException).code}`;
    }
    if (this.cache?.key === key) return this.cache.state;
    if (key === "missing") {
      this.cache = { key, state: { ...EMPTY, throttles: [] } };
      return this.cache.state;
    }
    let text: string | null = null;
    let why = "";
    if (key.startsWith("stat-failed")) why = key.slice("stat-failed:".length);
    else {
      // In the state dir a job's child could reach: a FIFO or a link there is refused, not waited on.
      const read = readChildFileSync(this.file, SHARED_MAX_BYTES);
      if (read.ok) text = read.text;
      else why = read.detail;
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
    log.warn(
      `codex: ${this.file} is ${text === null ? `unreadable (${why})` : "corrupt"}; holding admission ${UNREADABLE_COOLDOWN_MS / 1000} s as a precaution and rewriting it`,
    );
    this.cache = { key, state };
    // Rewrite only the file we judged, and only under the lock: a server writing it right
    // now is fixing it anyway.
    if (text !== null) this.write(state, key);
    return state;
  }

  /**
   * Read-modify-write under the lock; never throws and never blocks (classify and gate
   * are sync). With the lock busy, the change shows locally at once and is applied to the
   * file on a later turn (LOCK_RETRY_MS), re-read under the lock so no other server's
   * update is overwritten; after the last retry it is dropped with a warning.
   */
  update(fn: (s: SharedState, now: number) => void, at = this.now(), attempt = 0): void {
    let h: LockHandle | null;
    try {
      privateDir(this.dir);
      h = tryLock(this.lockFile);
    } catch (e) {
      // No server can take this lock (unopenable file, no flock): writing without it is
      // the only way a cooldown reaches the others.
      log.warn(`codex: shared account lock unavailable (${describeError(e)}); updating without it`);
      this.apply(fn, at);
      return;
    }
    if (h) {
      using _held = h;
      this.apply(fn, at);
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
      log.warn(
        `codex: shared account lock busy for ${LOCK_RETRY_MS.reduce((a, b) => a + b, 0)} ms; this update was not shared with other servers`,
      );
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
    try {
      // Held (when taken) until this block ends.
      using h = ifKey === undefined ? null : tryLock(this.lockFile);
      if (ifKey !== undefined) {
        if (!h) return;
        const st = statSync(this.file);
        if (`${st.ino}:${st.mtimeMs}:${st.size}` !== ifKey) return;
      }
      replacePrivate(this.file, JSON.stringify(s));
      if (ifKey === undefined) this.cache = null;
    } catch (e) {
      log.warn(`codex: could not update the shared account state: ${describeError(e)}`);
    }
  }
}
