import type { Message, ToolResultBlock } from "../backends/types.ts";

export type PruneLimits = {
  /** Characters of whole tool results the conversation may carry before a prune. */
  budgetChars: number;
  /** The newest results that always stay whole: the ones the model is working with. */
  keep: number;
};

const STUB_PREFIX = "[earlier ";

/** A prune brings the whole results down to this share of the budget, so the next several turns only append. */
const LOW_WATER_SHARE = 0.25;

/**
 * Replaces old tool results with a stub, in batches. Every turn resends the whole
 * conversation, so a 20 KB file read on turn 2 would otherwise be paid for on every
 * later turn. But a prefix cache (llama.cpp, vLLM, Anthropic) only skips the bytes that
 * match the previous request: stubbing one old result per turn makes the backend
 * prefill everything after it again on every turn. So nothing is touched until the
 * whole results pass the budget; then the oldest are stubbed at once, down to a low-water
 * mark, and the turns that follow append only. Blocks are mutated in place (they live in
 * the history) and each is stubbed once.
 */
export class ToolResultPruner {
  private readonly blocks: { block: ToolResultBlock; tool: string }[] = [];
  private pruned = 0;
  private wholeChars = 0;
  private prunes = 0;
  /** Results added since the last settle(): the current turn's, never stubbed. */
  private turnResults = 0;
  constructor(private readonly limits: PruneLimits) {}

  add(block: ToolResultBlock, tool: string): void {
    this.blocks.push({ block, tool });
    this.wholeChars += block.content.length;
    this.turnResults++;
  }

  /** An earlier run's result (a follow-up's): counted against the budget, never part of the current turn. */
  adopt(block: ToolResultBlock, tool: string): void {
    if (block.content.startsWith(STUB_PREFIX)) return; // stubbed by the earlier run: stays as it is
    this.blocks.push({ block, tool });
    this.wholeChars += block.content.length;
  }

  /** Call once a turn's results are all added (notes included): stubs a batch if over budget. */
  settle(): void {
    const current = this.turnResults;
    this.turnResults = 0;
    if (this.wholeChars <= this.limits.budgetChars) return;
    const lowWater = this.limits.budgetChars * LOW_WATER_SHARE;
    const stubbable = this.blocks.length - Math.max(1, this.limits.keep, current);
    if (this.pruned >= stubbable) return;
    this.prunes++;
    while (this.pruned < stubbable && this.wholeChars > lowWater) this.stub(this.blocks[this.pruned++]!);
  }

  private stub(old: { block: ToolResultBlock; tool: string }): void {
    const size = old.block.content.length;
    this.wholeChars -= size;
    old.block.content = `${STUB_PREFIX}${old.tool} result removed to save context (${size} chars); call the tool again if you still need it]`;
  }

  get prunedCount(): number {
    return this.pruned;
  }

  /** How many batches were stubbed: each one costs the backend a re-prefill of what follows. */
  get pruneCount(): number {
    return this.prunes;
  }
}

/**
 * The note appended to the last tool_result of a turn. Models lose count of turns, and
 * a note inside the result they are reading is the one they notice.
 * `remaining` = turns left after the one that produced these results.
 */
export function countdownNote(remaining: number): string | null {
  if (remaining === 3) {
    return (
      "\n\n[dl: 3 turns left in this run. Wrap up now: save your work in the files (delegates do not commit: " +
      "the user reviews and commits), then write your final report: what changed, what you verified, what is left.]"
    );
  }
  if (remaining === 2) return "\n\n[dl: 2 turns left. Finish writing your files; do not commit.]";
  if (remaining === 1) {
    return (
      "\n\n[dl: your next reply is the last turn: no more tools will run. Reply with your final report: " +
      "what is done, what you verified and how, and what is left.]"
    );
  }
  return null;
}

export const NUDGE_TEXT =
  "You described what you would do next but did not call any tool, so nothing was done. " +
  "If work remains, call the tools now. If you are finished, give your final report without announcing further steps.";

/**
 * A follow-up's pruner starts with the earlier run's tool results, in order, so the
 * budget covers the whole conversation and the oldest results are still the first
 * stubbed. Nothing is stubbed before the first new turn settles: the first request
 * resends the earlier messages exactly.
 */
export function seedPruner(pruner: ToolResultPruner, messages: readonly Message[]): void {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b.type === "tool_use") names.set(b.id, b.name);
      else if (b.type === "tool_result") pruner.adopt(b, names.get(b.tool_use_id) ?? "tool");
    }
  }
}
