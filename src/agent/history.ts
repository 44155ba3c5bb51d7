import type { ToolResultBlock } from "../backends/types.ts";

/**
 * Replaces old tool results with a stub, keeping the newest `keep` in full. Every turn
 * resends the whole conversation, so a 20 KB file read on turn 2 would otherwise be paid
 * for on every later turn. Blocks are mutated in place (they live in the history) and
 * each is pruned once, so the work per turn stays constant.
 */
export class ToolResultPruner {
  private readonly blocks: { block: ToolResultBlock; tool: string }[] = [];
  private pruned = 0;
  constructor(private readonly keep: number) {}

  add(block: ToolResultBlock, tool: string): void {
    this.blocks.push({ block, tool });
    while (this.blocks.length - this.pruned > this.keep) {
      const old = this.blocks[this.pruned++];
      if (!old) break;
      const size = old.block.content.length;
      old.block.content = `[earlier ${old.tool} result removed to save context (${size} chars); call the tool again if you still need it]`;
    }
  }

  get prunedCount(): number {
    return this.pruned;
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
      "\n\n[dl: 3 turns left in this run. Wrap up now: if you changed files in a git repository, save your work " +
      'with `git add -A && git commit -m "wip: <what you did>"`, then write your final report.]'
    );
  }
  if (remaining === 2) return "\n\n[dl: 2 turns left. Finish and save your work.]";
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
