/**
 * The cached body builders (anthropicPayload/openaiPayload) must send exactly the bytes
 * JSON.stringify of the reference body objects (anthropicBody/openaiBody) produces, for
 * any conversation and option mix, across turns, and after the history is mutated in
 * place the way the loop and the pruner do it.
 */
import { describe, expect, test } from "bun:test";
import { ToolResultPruner } from "../../src/agent/history.ts";
import { anthropicBody, anthropicPayload } from "../../src/backends/anthropic.ts";
import { openaiBody, openaiPayload } from "../../src/backends/openai.ts";
import type { ContentBlock, Message, ModelRequest, ToolResultBlock, ToolSpec } from "../../src/backends/types.ts";
import { request, TOOLS } from "./util.ts";

type Format = "anthropic" | "openai";
const FORMATS: Format[] = ["anthropic", "openai"];
const reference = (f: Format, r: ModelRequest) => JSON.stringify(f === "anthropic" ? anthropicBody(r) : openaiBody(r));
const payload = (f: Format, r: ModelRequest) => (f === "anthropic" ? anthropicPayload(r) : openaiPayload(r));

/**
 * Every option mix, over the same history objects (so caches are shared across them).
 * The message caches hold one resendReasoning variant, so each call starts with the one
 * the previous call ended with: after an in-place edit the first lookups would hit a
 * stale entry if edits went unseen, rather than miss on the variant.
 */
let lastResend = false;
function expectSameEverywhere(messages: Message[], over: Partial<ModelRequest> = {}): number {
  let checked = 0;
  const order = [lastResend, !lastResend];
  lastResend = !lastResend;
  for (const f of FORMATS) {
    for (const resendReasoning of order) {
      for (const promptCaching of [false, true]) {
        for (const stream of [false, true]) {
          const r = request("http://127.0.0.1:9", f === "anthropic" ? "glm-x" : "gpt-x", {
            messages,
            promptCaching,
            resendReasoning,
            stream,
            ...over,
          });
          const want = reference(f, r);
          expect(payload(f, r)).toBe(want);
          // Second call is served from the caches: still the same bytes.
          expect(payload(f, r)).toBe(want);
          checked++;
        }
      }
    }
  }
  return checked;
}

// Strings JSON escapes in every way it can: quotes, backslashes, controls, line
// separators, non-ASCII, astral and lone surrogates.
const NASTY = `a "quoted" \\ back\nslash\t\u0001\u001f \u2028\u2029 ünï ✓ 😀 \ud800 lone \udfff end`;

function richHistory(): Message[] {
  return [
    { role: "user", content: `do it ${NASTY}` },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "unsigned reasoning" },
        { type: "thinking", thinking: "signed reasoning", signature: "sig-abc" },
        { type: "text", text: `I will read ${NASTY}` },
        {
          type: "tool_use",
          id: "t1",
          name: "read_file",
          input: { path: "a.ts", nested: { list: [1, 2.5, null, true], s: NASTY } },
        },
        { type: "tool_use", id: "t2", name: "run_bash", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t1", content: `1\t${"x".repeat(5000)}${NASTY}` },
        { type: "tool_result", tool_use_id: "t2", content: "failed", is_error: true },
        { type: "text", text: "also this" },
        { type: "text", text: "and this" },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "" }] },
    { role: "user", content: "" },
  ];
}

describe("cached payload equals JSON.stringify of the reference body", () => {
  test("a rich conversation, every format and option mix, with and without system/tools", () => {
    const h = richHistory();
    expect(expectSameEverywhere(h)).toBe(16);
    expectSameEverywhere(h, { system: "" });
    expectSameEverywhere(h, { tools: [] });
    expectSameEverywhere(h, { system: `sys ${NASTY}`, tools: TOOLS.slice(0, 1) });
  });

  test("every possible final message: string, empty string, blocks, thinking only, no blocks", () => {
    const lasts: Message[] = [
      { role: "user", content: "plain" },
      { role: "user", content: "" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "t" },
          { type: "thinking", thinking: "after" },
        ],
      },
      { role: "assistant", content: [{ type: "thinking", thinking: "only unsigned" }] },
      { role: "assistant", content: [{ type: "thinking", thinking: "only signed", signature: "s" }] },
      { role: "user", content: [] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "" }] },
    ];
    for (const last of lasts) expectSameEverywhere([{ role: "user", content: "first" }, last]);
  });

  test("blocks with keys in unusual order or extra keys keep JSON.stringify's layout", () => {
    const odd = { content: "c", tool_use_id: "u", type: "tool_result", extra: undefined } as unknown as ContentBlock;
    const marked = {
      type: "text",
      text: "x",
      cache_control: { type: "ephemeral", ttl: "1h" },
    } as unknown as ContentBlock;
    expectSameEverywhere([{ role: "user", content: [odd] }]);
    expectSameEverywhere([{ role: "user", content: [odd, marked] }]);
  });

  test("a growing agent conversation stays identical turn by turn, through pruning and appended notes", () => {
    for (const f of FORMATS) {
      for (const [promptCaching, resendReasoning] of [
        [false, false],
        [true, true],
        [true, false],
      ] as const) {
        const history: Message[] = [{ role: "user", content: "read the parts" }];
        // A budget of one character prunes on every turn: the most cache entries to invalidate.
        const pruner = new ToolResultPruner({ budgetChars: 1, keep: 2 });
        for (let turn = 1; turn <= 12; turn++) {
          const r = request("http://127.0.0.1:9", "m", { messages: history, promptCaching, resendReasoning });
          expect(payload(f, r)).toBe(reference(f, r));
          history.push({
            role: "assistant",
            content: [
              { type: "text", text: `part ${turn}` },
              { type: "tool_use", id: `t${turn}`, name: "read_file", input: { path: `p${turn}` } },
            ],
          });
          const block: ToolResultBlock = {
            type: "tool_result",
            tool_use_id: `t${turn}`,
            content: `${turn}\t${"y".repeat(20_000)}`,
          };
          // The loop appends its countdown note to the last result before pushing it.
          if (turn > 9) block.content += `\n\n[dl: ${12 - turn} turns left]`;
          history.push({ role: "user", content: [block] });
          pruner.add(block, "read_file");
          pruner.settle();
        }
        expect(pruner.prunedCount).toBe(10);
        const r = request("http://127.0.0.1:9", "m", { messages: history, promptCaching, resendReasoning });
        const body = payload(f, r);
        expect(body).toBe(reference(f, r));
        expect(body).toContain("earlier read_file result removed");
      }
    }
  });

  test("in-place edits of any field, added or removed blocks and keys, are seen", () => {
    const h = richHistory();
    expectSameEverywhere(h);
    const asst = h[1]!.content as ContentBlock[];
    const user = h[2]!.content as ContentBlock[];
    const edits: (() => void)[] = [
      () => ((asst[2] as { text: string }).text = "changed"),
      () => ((asst[3] as { input: Record<string, unknown> }).input = { path: "b.ts" }),
      () => ((asst[3] as { id: string }).id = "t9"),
      () => ((asst[1] as { signature?: string }).signature = undefined),
      () => delete (asst[1] as { signature?: string }).signature,
      () => ((user[1] as ToolResultBlock).is_error = false),
      () => delete (user[1] as ToolResultBlock).is_error,
      () => user.push({ type: "text", text: "pushed later" }),
      () => user.splice(0, 1),
      () => (h[0]!.content = "new task"),
      () => (h[3]!.role = "user"),
      () => ((user[0] as unknown as Record<string, unknown>).extra = 1),
      () => (h[4]!.content = [{ type: "text", text: "now blocks" }]),
    ];
    for (const edit of edits) {
      edit();
      expectSameEverywhere(h);
    }
  });

  test("tools: caching marks only the last; edits to the list are seen", () => {
    const tools: ToolSpec[] = TOOLS.map((t) => ({ ...t }));
    const h: Message[] = [{ role: "user", content: "x" }];
    expectSameEverywhere(h, { tools });
    tools[1]!.description = "Run a shell command";
    expectSameEverywhere(h, { tools });
    tools.push({ name: "write_file", description: NASTY, input_schema: { type: "object", properties: {} } });
    expectSameEverywhere(h, { tools });
    tools.pop();
    tools.pop();
    expectSameEverywhere(h, { tools });
  });

  test("randomized conversations and mutations (seeded)", () => {
    // mulberry32: a plain LCG's low bits repeat with a short period.
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const strs = ["", "a", NASTY, "x".repeat(300), "line\nline", "\u2028"];
    const s = () => strs[rnd(strs.length)]!;
    const block = (): ContentBlock => {
      switch (rnd(5)) {
        case 0:
          return { type: "text", text: s() };
        case 1:
          return rnd(2) ? { type: "thinking", thinking: s(), signature: s() } : { type: "thinking", thinking: s() };
        case 2:
          return { type: "tool_use", id: s(), name: "read_file", input: rnd(2) ? {} : { path: s(), n: rnd(100) } };
        default:
          return rnd(2)
            ? { type: "tool_result", tool_use_id: s(), content: s(), is_error: rnd(2) === 1 }
            : { type: "tool_result", tool_use_id: s(), content: s() };
      }
    };
    const message = (): Message => ({
      role: rnd(2) ? "user" : "assistant",
      content: rnd(4) === 0 ? s() : Array.from({ length: rnd(4) }, block),
    });
    let checks = 0;
    for (let round = 0; round < 40; round++) {
      const h = Array.from({ length: 1 + rnd(6) }, message);
      const system = s();
      for (let step = 0; step < 5; step++) {
        checks += expectSameEverywhere(h, { system });
        const m = h[rnd(h.length)]!;
        if (typeof m.content === "string" || m.content.length === 0 || rnd(3) === 0) h.push(message());
        else {
          const b = m.content[rnd(m.content.length)] as unknown as Record<string, unknown>;
          const keys = Object.keys(b).filter((k) => typeof b[k] === "string" && k !== "type");
          const k = keys[rnd(keys.length)];
          if (k) b[k] = `${b[k] as string}${s()}!`;
        }
      }
    }
    expect(checks).toBe(40 * 5 * 16);
  });
});

describe("the cache does its job", () => {
  test("a new turn encodes only what is new, not the kept history", () => {
    for (const f of FORMATS) {
      const history: Message[] = [{ role: "user", content: "task" }];
      for (let i = 0; i < 20; i++) {
        history.push({
          role: "assistant",
          content: [{ type: "tool_use", id: `t${i}`, name: "read_file", input: { path: `f${i}` } }],
        });
        history.push({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: `t${i}`, content: `"${i}"\n`.repeat(4000) }],
        });
      }
      const r = request("http://127.0.0.1:9", "m", { messages: history, promptCaching: true });
      payload(f, r);
      history.push({ role: "assistant", content: [{ type: "text", text: "done" }] });
      // Count the characters JSON.stringify produces while the next body is built.
      const real = JSON.stringify;
      let encoded = 0;
      JSON.stringify = ((...args: Parameters<typeof real>) => {
        const out = real(...args);
        encoded += out?.length ?? 0;
        return out;
      }) as typeof real;
      let body: string;
      try {
        body = payload(f, r);
      } finally {
        JSON.stringify = real;
      }
      expect(body).toBe(reference(f, r));
      expect(body.length).toBeGreaterThan(600_000);
      expect(encoded).toBeLessThan(1_000);
    }
  });
});
