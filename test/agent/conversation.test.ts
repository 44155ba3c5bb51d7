import { describe, expect, test } from "bun:test";
import { readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  continueMessages,
  keyMismatch,
  newConversationId,
  type StoredConversation,
  storableConversation,
} from "../../src/agent/conversation.ts";
import { ConversationStore } from "../../src/agent/conversation-store.ts";
import type { Message } from "../../src/backends/types.ts";
import { knowSecrets, redact } from "../../src/sys/redact.ts";
import { tempDir } from "../helpers/dl.ts";

const conv = (id: string, messages: Message[] = [{ role: "user", content: "t" }]): StoredConversation => ({
  v: 1,
  id,
  agent: "helper",
  workdir: "/w",
  model: "m",
  prompt_turns: 25,
  created_at: 1,
  updated_at: 1,
  messages,
});

describe("continueMessages", () => {
  test("the earlier messages stay the same objects; the task follows as a user turn", () => {
    const prior: Message[] = [
      { role: "user", content: "first" },
      { role: "assistant", content: [{ type: "text", text: "done" }] },
    ];
    const out = continueMessages(prior, "more");
    expect(out.slice(0, 2)).toEqual(prior);
    expect(out[0]).toBe(prior[0]!);
    expect(out[2]).toEqual({ role: "user", content: "more" });
  });

  test("tool calls the earlier run never answered get a 'not run' result before the task", () => {
    const prior: Message[] = [
      { role: "user", content: "first" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "run_bash", input: { command: "ls" } }] },
    ];
    const last = continueMessages(prior, "more").at(-1)!;
    expect(last.role).toBe("user");
    const blocks = last.content as { type: string; tool_use_id?: string; is_error?: boolean; text?: string }[];
    expect(blocks[0]).toMatchObject({ type: "tool_result", tool_use_id: "t1", is_error: true });
    expect(blocks[1]).toEqual({ type: "text", text: "more" });
  });

  test("a run that stopped on a user turn (a failed model call) gets the task joined to it: roles alternate", () => {
    const prior: Message[] = [
      { role: "user", content: "first" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read_file", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "x" }] },
    ];
    const out = continueMessages(prior, "more");
    expect(out).toHaveLength(3);
    expect(out[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "t1", content: "x" },
      { type: "text", text: "more" },
    ]);
    expect(prior[2]!.content).toHaveLength(1); // the stored message itself is not changed
  });
});

test("keyMismatch names each field that differs and passes an exact match", () => {
  const c = conv(newConversationId());
  expect(keyMismatch(c, { agent: "helper", workdir: "/w", model: "m" })).toBeNull();
  const why = keyMismatch(c, { agent: "x", workdir: "/w", model: "n" })!;
  expect(why).toContain('agent ("x", but it ran with "helper")');
  expect(why).toContain('model ("n", but it ran with "m")');
  expect(why).not.toContain("workdir (");
});

describe("ConversationStore", () => {
  test("kept 0600; over the size bound not kept at all; over the count bound the oldest idle ones go", () => {
    const dir = join(tempDir("convs"), "conversations");
    const store = new ConversationStore(dir, { maxBytes: 2_000, maxCount: 3 });
    const ids = [1, 2, 3, 4].map(() => newConversationId());
    const held = store.hold(ids[0]!)!; // running: never removed
    ids.forEach((id, i) => {
      expect(store.save(conv(id))).toBe(true);
      utimesSync(join(dir, `${id}.json`), 1_000 + i, 1_000 + i); // saved in this order
    });
    expect(statSync(join(dir, `${ids[1]}.json`), { throwIfNoEntry: false })).toBeUndefined();
    const kept = readdirSync(dir).filter((f) => f.endsWith(".json"));
    expect(kept.sort()).toEqual([ids[0], ids[2], ids[3]].map((i) => `${i}.json`).sort());
    expect(statSync(join(dir, `${ids[3]}.json`)).mode & 0o777).toBe(0o600);
    held.release();
    const big = conv(newConversationId(), [{ role: "user", content: "x".repeat(3_000) }]);
    expect(store.save(big)).toBe(false);
    expect(() => store.load(big.id)).toThrow(`no conversation ${big.id}`);
  });

  test("a workdir that holds a value learned from text is kept as it is, so a later process continues it", () => {
    redact("DB_PASSWORD=proj7Learned!x");
    const dir = join(tempDir("convs"), "conversations");
    const store = new ConversationStore(dir);
    const id = newConversationId();
    const c = {
      ...conv(id, [{ role: "user", content: "the password is proj7Learned!x" }]),
      workdir: "/w/proj7Learned!x",
    };
    expect(store.save(c)).toBe(true);
    const back = store.load(id);
    expect(back.workdir).toBe("/w/proj7Learned!x");
    expect(JSON.stringify(back.messages)).not.toContain("proj7Learned"); // its messages are cut of it
    expect(keyMismatch(back, { agent: "helper", workdir: "/w/proj7Learned!x", model: "m" })).toBeNull();
  });

  test("a second hold of a held conversation is refused; a damaged or linked file is refused, not parsed", () => {
    const dir = join(tempDir("convs"), "conversations");
    const store = new ConversationStore(dir);
    const id = newConversationId();
    const a = store.hold(id)!;
    expect(store.hold(id)).toBeNull();
    a.release();
    store.hold(id)!.release();
    writeFileSync(join(dir, `${id}.json`), "{ not json");
    expect(() => store.load(id)).toThrow("is damaged");
    const other = newConversationId();
    const target = join(tempDir("elsewhere"), "c.json");
    writeFileSync(target, JSON.stringify(conv(other)));
    symlinkSync(target, join(dir, `${other}.json`));
    expect(() => store.load(other)).toThrow(`conversation ${other} cannot be read (ELOOP)`);
    expect(() => store.load("../../etc/passwd")).toThrow("is not a conversation id");
    // The lock a follow-up of a missing id left is removed with the old conversations.
    const ghost = newConversationId();
    store.hold(ghost)!.release();
    expect(store.prune(-1)).toBe(3);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("a conversation kept without its keys", () => {
  const KEY = "cv-known-secret-value-4242";
  knowSecrets([KEY]);

  test("every string is redacted and the rest stays byte for byte; reasoning that held a key goes whole", () => {
    const c = conv(newConversationId(), [
      { role: "user", content: "read the env" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: `the key is ${KEY}`, signature: "sig-for-that-text" },
          { type: "thinking", thinking: "nothing secret here", signature: "sig-2" },
          { type: "tool_use", id: "t1", name: "read_file", input: { path: ".env" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: `KEY=${KEY}` }] },
      { role: "assistant", content: [{ type: "thinking", thinking: `again ${KEY}`, signature: "s3" }] },
    ]);
    const kept = storableConversation(c);
    expect(JSON.stringify(kept)).not.toContain(KEY);
    expect(kept.messages[0]).toEqual(c.messages[0]!);
    // Its signature would no longer match redacted text, so the backend would refuse it.
    expect(kept.messages[1]!.content).toEqual([
      { type: "thinking", thinking: "nothing secret here", signature: "sig-2" },
      { type: "tool_use", id: "t1", name: "read_file", input: { path: ".env" } },
    ]);
    expect(kept.messages[2]!.content).toEqual([{ type: "tool_result", tool_use_id: "t1", content: "KEY=<redacted>" }]);
    // A turn left with nothing keeps a note, not an empty content (which backends refuse).
    expect(kept.messages[3]!.content).toEqual([{ type: "text", text: "[dl: reasoning removed here: it held a key]" }]);
  });

  test("a follow-up of a conversation kept with a redacted model or workdir still matches it", () => {
    const c = storableConversation({
      ...conv(newConversationId()),
      model: `sk-${"a".repeat(20)}`,
      workdir: `/w/${KEY}`,
    });
    expect(keyMismatch(c, { agent: "helper", model: `sk-${"a".repeat(20)}`, workdir: `/w/${KEY}` })).toBeNull();
    expect(keyMismatch(c, { agent: "helper", model: "other", workdir: `/w/${KEY}` })).toContain("model");
  });
});
