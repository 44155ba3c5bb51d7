import { closeSync, constants, openSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../errors.ts";
import { type LockHandle, tryLock } from "../sys/flock.ts";
import { ownedFd } from "../sys/owned.ts";
import { privateDir, replacePrivate } from "../sys/private-file.ts";
import { type StoredConversation, storableConversation, storedConversationSchema } from "./conversation.ts";
import { CONVERSATION_ID } from "./conversation-id.ts";
import { readCapped } from "./tools/read-capped.ts";

export type ConversationLimits = {
  /** A conversation larger than this (as JSON) is not kept: its result has no conversation_id. */
  maxBytes: number;
  /** Conversations kept at most; saving one more removes the oldest idle ones. */
  maxCount: number;
};

const CONVERSATION_LIMITS: ConversationLimits = { maxBytes: 16 * 1024 * 1024, maxCount: 500 };

/**
 * Finished conversations, one private file each (0600, in a 0700 folder of the agent
 * state dir), `<id>.json` beside the `<id>.lock` that a run holds while it continues the
 * conversation: a second follow-up of a conversation still running is refused, across
 * processes (flock). Bounded in size and count; `dl reap` removes old ones like old jobs.
 */
export class ConversationStore {
  constructor(
    readonly dir: string,
    private readonly limits: ConversationLimits = CONVERSATION_LIMITS,
    /** The state dir holding `dir`: it is kept private too. */
    private readonly root?: string,
  ) {}

  /** The state dir's folder for conversations. */
  static in(agentStateDir: string, limits?: ConversationLimits): ConversationStore {
    return new ConversationStore(join(agentStateDir, "conversations"), limits, agentStateDir);
  }

  private ensureDir(): void {
    privateDir(this.dir, this.root);
  }

  /** Holds `id` for a run; null while another run (in any process) holds it. */
  hold(id: string): LockHandle | null {
    checkId(id);
    this.ensureDir();
    return tryLock(join(this.dir, `${id}.lock`), { stillLinked: true });
  }

  /**
   * Removes the lock file of `id` while the caller holds it (`hold`): a follow-up of an id
   * that does not exist must leave nothing behind (the lock stays unusable to others:
   * stillLinked sees the name gone).
   */
  dropLock(id: string): void {
    checkId(id);
    rmSync(join(this.dir, `${id}.lock`), { force: true });
  }

  /** The conversation, or DlError not_found / storage with what to do. */
  load(id: string): StoredConversation {
    checkId(id);
    const buf = this.readFile(join(this.dir, `${id}.json`), id);
    let json: unknown;
    try {
      json = JSON.parse(buf.toString("utf8"));
    } catch {
      json = undefined;
    }
    const parsed = storedConversationSchema().safeParse(json);
    if (!parsed.success || parsed.data.id !== id) {
      throw new DlError("storage", `conversation ${id} is damaged and cannot be continued; start a new delegation`);
    }
    return parsed.data;
  }

  /** Keeps `c` (redacted, atomically, 0600); false when it is over the size bound. Trims the store to its count bound. */
  save(c: StoredConversation): boolean {
    checkId(c.id);
    const data = JSON.stringify(storableConversation(c));
    if (Buffer.byteLength(data, "utf8") > this.limits.maxBytes) return false;
    this.ensureDir();
    // Every string of it was cut by storableConversation, each as its field needs.
    replacePrivate(join(this.dir, `${c.id}.json`), data, "by-caller");
    this.trim(this.limits.maxCount, c.id);
    return true;
  }

  /** Removes conversations untouched for `maxAgeMs` (none still running). Returns how many. */
  prune(maxAgeMs: number, now = Date.now()): number {
    return this.remove(this.idle().filter((c) => now - c.mtime > maxAgeMs));
  }

  private trim(maxCount: number, keep: string): void {
    const all = this.idle().filter((c) => c.id !== keep);
    const over = all.length + 1 - maxCount;
    if (over > 0)
      this.remove(
        all.sort((a, b) => a.mtime - b.mtime),
        over,
      );
  }

  private idle(): { id: string; mtime: number }[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    // A lock file alone is left by a follow-up of an id that never existed: it goes too.
    const ids = new Set(names.map((n) => n.replace(/\.(json|lock)$/, "")).filter((id) => CONVERSATION_ID.test(id)));
    const out: { id: string; mtime: number }[] = [];
    for (const id of ids) {
      const st =
        statSync(join(this.dir, `${id}.json`), { throwIfNoEntry: false }) ??
        statSync(join(this.dir, `${id}.lock`), { throwIfNoEntry: false });
      if (st) out.push({ id, mtime: st.mtimeMs });
    }
    return out;
  }

  /** Deletes, in order, up to `most` conversations whose lock is free right now; a running one stays. */
  private remove(list: { id: string }[], most = Number.POSITIVE_INFINITY): number {
    let removed = 0;
    for (const { id } of list) {
      if (removed >= most) break;
      const held = this.hold(id);
      if (!held) continue;
      try {
        rmSync(join(this.dir, `${id}.json`), { force: true });
        rmSync(join(this.dir, `${id}.lock`), { force: true });
        removed++;
      } finally {
        held.release();
      }
    }
    return removed;
  }

  /** The file's bytes through one no-follow, non-blocking descriptor, bounded. */
  private readFile(file: string, id: string): Buffer {
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") {
        throw new DlError(
          "not_found",
          `no conversation ${id}: it never existed, or it was removed (dl reap removes conversations as old as finished jobs, and only the newest ${this.limits.maxCount} are kept); start a new delegation without continue_from`,
        );
      }
      throw new DlError("storage", `conversation ${id} cannot be read (${(e as NodeJS.ErrnoException).code})`);
    }
    try {
      // A conversation of another user's (planted) is not continued: sys/owned.ts.
      const st = ownedFd(fd, file);
      const buf = st.isFile() ? readCapped(fd, this.limits.maxBytes, st.size) : null;
      if (!buf)
        throw new DlError(
          "storage",
          `conversation ${id} is not a regular file within the size bound; start a new delegation`,
        );
      return buf;
    } finally {
      closeSync(fd);
    }
  }
}

function checkId(id: string): void {
  if (!CONVERSATION_ID.test(id)) {
    throw new DlError(
      "bad_input",
      `continue_from ${JSON.stringify(id.slice(0, 80))} is not a conversation id: pass the conversation_id a result gave (cv- and 20 hex digits)`,
    );
  }
}
