import {
  type ConversationKey,
  keyMismatch,
  newConversationId,
  type StoredConversation,
} from "../agent/conversation.ts";
import { ConversationStore } from "../agent/conversation-store.ts";
import type { Message } from "../backends/types.ts";
import { DlError, describeError, isDlError } from "../errors.ts";
import { log } from "../log.ts";

/**
 * Follow-ups (`continue_from`) for every delegation entry point: the conversation a call
 * continues is found and checked when the call is prepared, then held (flock) for the
 * whole run, so a second follow-up of the same conversation while one runs is refused,
 * and the conversation is kept again when the run ends.
 */

const busy = (id: string) =>
  new DlError(
    "busy",
    `conversation ${id} is still running in another call; wait for that call's result, then continue from it`,
  );

/** The conversation `id` as a follow-up finds it when prepared: refused while another call runs it. */
export function loadPrior(agentStateDir: string, id: string): StoredConversation {
  const store = ConversationStore.in(agentStateDir);
  const held = store.hold(id);
  if (!held) throw busy(id);
  try {
    return store.load(id);
  } catch (e) {
    // An id that never existed (or was removed) leaves no lock file behind.
    if (isDlError(e, "not_found")) store.dropLock(id);
    throw e;
  } finally {
    held.release();
  }
}

/** A conversation held for one run: its id, what it continues, and how it is kept when the run ends. */
export type HeldConversation = {
  id: string;
  prior?: StoredConversation;
  /** Keeps the conversation; false when it could not be (over the bound, storage failed). */
  keep(messages: Message[], promptTurns: number, model: string): boolean;
  release(): void;
};

/**
 * Holds the conversation a run continues (reloaded under the lock: another follow-up may
 * have extended it since the call was prepared), or a new one. A DlError when a
 * follow-up cannot run; null when a new run cannot keep its conversation (the run goes
 * on without one: a follow-up is a convenience, not a guard).
 */
export function holdConversation(
  agentStateDir: string,
  key: ConversationKey,
  priorId: string | undefined,
): HeldConversation | null {
  const store = ConversationStore.in(agentStateDir);
  const id = priorId ?? newConversationId();
  let lock: ReturnType<ConversationStore["hold"]>;
  try {
    lock = store.hold(id);
  } catch (e) {
    if (priorId) throw e;
    log.warn(`conversations cannot be kept in ${store.dir} (${describeError(e)}); results carry no conversation_id`);
    return null;
  }
  if (!lock) throw busy(id);
  let prior: StoredConversation | undefined;
  try {
    prior = priorId ? store.load(priorId) : undefined;
    const why = prior && keyMismatch(prior, key);
    if (why) throw new DlError("bad_input", why);
  } catch (e) {
    lock.release();
    throw e;
  }
  const created = prior?.created_at ?? Date.now();
  const keep = (messages: Message[], promptTurns: number, model: string): boolean => {
    try {
      const now = Date.now();
      const c = {
        v: 1 as const,
        id,
        ...key,
        model,
        prompt_turns: promptTurns,
        created_at: created,
        updated_at: now,
        messages,
      };
      if (store.save(c)) return true;
      log.warn(`conversation ${id} is over the size bound and was not kept`);
    } catch (e) {
      log.warn(`conversation ${id} could not be kept (${describeError(e)})`);
    }
    return false;
  };
  return { id, prior, keep, release: () => lock.release() };
}
