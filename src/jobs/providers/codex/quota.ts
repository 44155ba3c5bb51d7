import { statSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../../../errors.ts";
import { readChildFile } from "../../../sys/child-file.ts";

/**
 * Plan usage as the Codex CLI last saw it. Every model response carries
 * `x-codex-{primary,secondary}-{used-percent,window-minutes,reset-at}` headers, and the
 * CLI writes them into its session log as the `rate_limits` of a `token_count` event:
 *
 *   CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl
 *   {"type":"event_msg","payload":{"type":"token_count","info":{…},
 *     "rate_limits":{"primary":{"used_percent":42.5,"window_minutes":300,"resets_at":<unix s>},
 *                    "secondary":{"used_percent":88.0,"window_minutes":10080,"resets_at":…}, …}}}
 *
 * The newest such event across the newest files is the account's state (any client on
 * this login writes there, not only dl's jobs).
 */

interface RateWindow {
  used_percent: number;
  window_minutes: number | null;
  /** Unix seconds. */
  resets_at: number | null;
}

export interface QuotaSnapshot {
  primary: RateWindow | null;
  secondary: RateWindow | null;
  /** When the CLI recorded it (the event's timestamp, ms). */
  observed_at: number | null;
}

/** Bytes read from the end of each file: the last token_count is near the end. */
const TAIL_BYTES = 1024 * 1024;

function windowOf(v: unknown): RateWindow | null {
  if (!v || typeof v !== "object") return null;
  const w = v as Record<string, unknown>;
  if (typeof w.used_percent !== "number" || !Number.isFinite(w.used_percent)) return null;
  return {
    used_percent: w.used_percent,
    window_minutes: typeof w.window_minutes === "number" ? w.window_minutes : null,
    resets_at: typeof w.resets_at === "number" ? w.resets_at : null,
  };
}

/** The last `token_count` with rate limits in one rollout file's text, or null. */
export function lastRateLimits(text: string): QuotaSnapshot | null {
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end);
    end = start - 1;
    if (!line.includes('"rate_limits"') || !line.includes('"token_count"')) continue;
    try {
      const e = JSON.parse(line) as {
        timestamp?: string;
        payload?: { type?: string; rate_limits?: Record<string, unknown> | null };
      };
      const rl = e.payload?.type === "token_count" ? e.payload.rate_limits : null;
      if (!rl) continue;
      const snap = {
        primary: windowOf(rl.primary),
        secondary: windowOf(rl.secondary),
        observed_at: e.timestamp ? Date.parse(e.timestamp) || null : null,
      };
      if (snap.primary || snap.secondary) return snap;
    } catch {
      // A line cut by the tail window or a partial write: look further back.
    }
  }
  return null;
}

/**
 * Scans the session files, newest first by modification time, and returns the newest
 * rate-limit record. `maxFiles` bounds the work when years of sessions pile up (paths
 * sort by date, so the newest candidates are the last ones).
 */
export async function readLatestRateLimits(codexHome: string, maxFiles = 40): Promise<QuotaSnapshot | null> {
  const root = join(codexHome, "sessions");
  const paths: string[] = [];
  try {
    for await (const p of new Bun.Glob("**/rollout-*.jsonl").scan({ cwd: root, absolute: true, onlyFiles: true }))
      paths.push(p);
  } catch {
    return null; // no sessions dir yet
  }
  paths.sort();
  const recent = paths
    .slice(-maxFiles)
    .map((p) => {
      try {
        const st = statSync(p);
        return { p, mtime: st.mtimeMs, size: st.size };
      } catch {
        return null;
      }
    })
    .filter((x): x is { p: string; mtime: number; size: number } => x !== null)
    .sort((a, b) => b.mtime - a.mtime);
  for (const f of recent) {
    // Codex (a child) writes these: a FIFO or a link there is skipped, never waited on.
    const read = await readChildFile(f.p, { maxBytes: TAIL_BYTES, over: "tail" });
    if (!read.ok) continue;
    const snap = lastRateLimits(read.text);
    if (snap) return snap;
  }
  return null;
}

function windowName(w: RateWindow): string {
  const m = w.window_minutes;
  if (m === 10080) return "weekly";
  if (m !== null && m % 60 === 0) return `${m / 60}h`;
  return m !== null ? `${m}min` : "plan";
}

export interface QuotaVerdict {
  warnings: string[];
  /** Why a submit is refused, or null. */
  refuse: string | null;
  /** For status displays: each live window with its reset time. */
  windows: { name: string; used_percent: number; resets_at: string | null }[];
}

/**
 * Warns above `warnPct`; refuses only when `refusePct` is set and reached, unless the
 * caller allows going over. A window whose reset time has passed no longer counts.
 */
export function evaluateQuota(
  snap: QuotaSnapshot | null,
  o: { warnPct: number; refusePct?: number | null; allowOver?: boolean; now: number },
): QuotaVerdict {
  const v: QuotaVerdict = { warnings: [], refuse: null, windows: [] };
  if (!snap) return v;
  for (const w of [snap.primary, snap.secondary]) {
    if (!w) continue;
    if (w.resets_at !== null && w.resets_at * 1000 <= o.now) continue;
    const name = windowName(w);
    const resets = w.resets_at !== null ? new Date(w.resets_at * 1000).toISOString() : null;
    v.windows.push({ name, used_percent: w.used_percent, resets_at: resets });
    const when = resets ? `; it resets at ${resets}` : "";
    if (o.refusePct !== undefined && o.refusePct !== null && w.used_percent >= o.refusePct && !o.allowOver) {
      v.refuse ??= `the Codex ${name} quota is at ${w.used_percent}% (refusal threshold DELEGATE_CODEX_QUOTA_REFUSE_PCT=${o.refusePct}%)${when}; wait, or pass allow_over_quota=true`;
    } else if (w.used_percent >= o.warnPct) {
      v.warnings.push(`Codex ${name} quota at ${w.used_percent}% (warning above ${o.warnPct}%)${when}`);
    }
  }
  return v;
}

/** Reads the session files at most once per `ttlMs`, so a burst of submits scans once. */
export class CodexQuota {
  private snap: QuotaSnapshot | null = null;
  private readAt = -Infinity;
  private pending: Promise<QuotaSnapshot | null> | null = null;

  constructor(
    private readonly options: {
      codexHome: string;
      warnPct: number;
      refusePct?: number | null;
      now?: () => number;
      ttlMs?: number;
    },
  ) {}

  async refresh(force = false): Promise<QuotaSnapshot | null> {
    const now = (this.options.now ?? Date.now)();
    if (!force && now - this.readAt < (this.options.ttlMs ?? 30_000)) return this.snap;
    this.pending ??= readLatestRateLimits(this.options.codexHome).finally(() => (this.pending = null));
    this.snap = await this.pending;
    this.readAt = now;
    return this.snap;
  }

  /** The verdict on the last read snapshot (sync: validate() runs inside submit). */
  verdict(allowOver = false): QuotaVerdict {
    return evaluateQuota(this.snap, {
      warnPct: this.options.warnPct,
      refusePct: this.options.refusePct,
      allowOver,
      now: (this.options.now ?? Date.now)(),
    });
  }

  /** Throws DlError "busy" when the refusal threshold is set and reached; else the warnings. */
  check(allowOver = false): string[] {
    const v = this.verdict(allowOver);
    if (v.refuse) throw new DlError("busy", v.refuse, { reason: "quota" });
    return v.warnings;
  }
}
