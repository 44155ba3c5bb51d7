import { expect, test } from "bun:test";
import { ToolResultPruner } from "../../src/agent/history.ts";
import type { ToolResultBlock } from "../../src/backends/types.ts";

const result = (i: number, size: number): ToolResultBlock => ({
  type: "tool_result",
  tool_use_id: `t${i}`,
  content: `${i}:${"x".repeat(size)}`,
});
const stubbed = (b: ToolResultBlock) => b.content.startsWith("[earlier ");

test("under the budget nothing is touched; over it, a batch is stubbed down to the low-water mark", () => {
  const p = new ToolResultPruner({ budgetChars: 10_000, keep: 1 });
  const blocks: ToolResultBlock[] = [];
  for (let i = 0; i < 4; i++) {
    blocks.push(result(i, 2_000));
    p.add(blocks[i]!, "read_file");
    p.settle();
  }
  expect(blocks.some(stubbed)).toBe(false);
  // The fifth result passes 10 000 chars: the four before it go at once (down to <= 2 500 whole chars).
  for (let i = 4; i < 6; i++) {
    blocks.push(result(i, 2_000));
    p.add(blocks[i]!, "read_file");
    p.settle();
  }
  expect(blocks.map(stubbed)).toEqual([true, true, true, true, false, false]);
  expect(p.pruneCount).toBe(1);
  // The turns after a prune append only: nothing older changes until the budget is passed again.
  const before = blocks.map((b) => b.content);
  for (let i = 6; i < 8; i++) {
    blocks.push(result(i, 2_000));
    p.add(blocks[i]!, "read_file");
    p.settle();
  }
  expect(blocks.slice(0, 6).map((b) => b.content)).toEqual(before);
  expect(p.pruneCount).toBe(1);
});

test("the newest `keep` results and the current turn's results always stay whole", () => {
  const p = new ToolResultPruner({ budgetChars: 100, keep: 2 });
  const blocks = [0, 1, 2].map((i) => result(i, 500));
  for (const b of blocks) p.add(b, "read_file");
  p.settle(); // one turn with three results: none may go
  expect(blocks.some(stubbed)).toBe(false);
  const next = result(3, 500);
  blocks.push(next);
  p.add(next, "run_bash");
  p.settle();
  expect(blocks.map(stubbed)).toEqual([true, true, false, false]);
  expect(blocks[0]!.content).toContain("earlier read_file result removed");
  expect(blocks[0]!.content).toContain("(502 chars)");
});
