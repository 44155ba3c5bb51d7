import { describe, expect, test } from "bun:test";
import { pollView } from "../../src/jobs/engine/poll.ts";
import type { JobRow } from "../../src/store/types.ts";
import { knowSecrets } from "../../src/sys/redact.ts";
import { sanitizeJson, sanitizeLine, sanitizeMultiline, shortenResponse } from "../../src/sys/sanitize.ts";

const HOSTILE =
  "\u001b[2J\u001b]0;title\u0007\u001b[31mred\u001b[0m rtl\u202etxet nul\u0000byte ls\u2028ps\u2029 zw\u200bsp bom\ufeff tab\there\r\nnext\u0085c1";
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/;

describe("output hygiene", () => {
  test("lines lose ANSI, bidi, NUL, format and separator characters; whitespace collapses", () => {
    const s = sanitizeLine(HOSTILE);
    expect(s).not.toMatch(UNSAFE);
    expect(s).not.toContain("title"); // an OSC sequence is dropped whole
    expect(s).toBe("red rtl txet nul byte ls ps zw sp bom tab here next c1");
  });

  test("whole sequences go, payload too: unterminated OSC, DCS strings, 8-bit C1 CSI and OSC", () => {
    const s = "a\u001bP1;2|dcs-payload\u001b\\ b\u009b2J c\u009d0;c1-title\u009c d\u001b]0;never-ended";
    for (const clean of [sanitizeLine(s), sanitizeMultiline(s)]) expect(clean).toBe("a b c d");
  });

  test("caps: 256 per text field, 110 for a preview, never splitting a surrogate pair", () => {
    expect(sanitizeLine("x".repeat(1_000_000)).length).toBe(256);
    expect(sanitizeLine("y".repeat(500), 110).length).toBe(110);
    const emoji = sanitizeLine("😀".repeat(200), 11);
    expect(emoji).toBe("😀😀😀😀😀…");
  });

  test("JSON: every string at any depth, keys included, cleaned and capped at 4000", () => {
    const v = sanitizeJson({
      a: HOSTILE,
      nested: [{ "k\u202eey": "z".repeat(10_000) }],
      n: 1,
      b: true,
      nil: null,
    }) as Record<string, unknown>;
    const text = JSON.stringify(v);
    expect(text).not.toMatch(/\\u00|\\u20|\u202e/);
    const inner = (v.nested as Record<string, string>[])[0]!;
    expect(Object.keys(inner)).toEqual(["k ey"]);
    expect(inner["k ey"]!.length).toBe(4000);
    expect(v.n).toBe(1);
    expect(v.b).toBe(true);
  });

  test("multi-line text keeps paragraphs but nothing unsafe", () => {
    expect(sanitizeMultiline("a\r\n\r\n\r\n\r\nb\u202e  c\u0000\n")).toBe("a\n\nb c");
  });

  test("responses cut at 300 words or 4000 characters, with the full length", () => {
    const words = Array.from({ length: 500 }, (_, i) => `w${i}`).join(" ");
    const r = shortenResponse(words);
    expect(r.truncated).toBe(true);
    expect(r.text.split(/\s+/).filter((w) => w !== "…")).toHaveLength(300);
    expect(r.length).toBe(words.length);
    const long = shortenResponse("a".repeat(1_048_576));
    expect(long.text.length).toBe(4000);
    expect(long.truncated).toBe(true);
    expect(long.length).toBe(1_048_576);
    expect(shortenResponse("short answer")).toEqual({ text: "short answer", truncated: false, length: 12 });
  });
});

const base: JobRow = {
  seq: 1,
  id: "tj-1",
  provider: "test",
  status: "done",
  queue_reason: null,
  project: "/p",
  workdir: "/p\u202e",
  workspace_root: "/p",
  model: "m",
  effort: null,
  task: "t",
  params: null,
  timeout_s: 60,
  owner_pid: 10,
  owner_start: "s",
  server_id: "srv-a",
  child_pid: null,
  child_pgid: null,
  child_start: null,
  child_cmd: null,
  created_at: 1_000,
  started_at: 3_000,
  ended_at: 13_000,
  last_activity_at: 12_000,
  exit_code: 0,
  failure_kind: null,
  final_response: "",
  usage: '{"t\\u001b":1}',
  session_id: null,
  retry_count: 0,
  retry_at: null,
  warnings: '["w\\u0000x"]',
  persist_error: null,
  changes: null,
  origin_id: null,
  origin_pid: null,
  origin_start: null,
};

describe("poll view", () => {
  test("ages, very_short_run, empty_response, sanitized fields, read_only for other servers", () => {
    const v = pollView(base, 20_000, false, "srv-b");
    expect(v).toMatchObject({
      elapsed_s: 10,
      queued_s: 2,
      very_short_run: true,
      empty_response: true,
      last_activity_age_s: null,
      read_only: true,
      owner: { pid: 10, sid: "srv-a", alive: false },
    });
    expect(v.workdir).toBe("/p");
    expect(v.usage).toEqual({ t: 1 });
    expect(v.warnings).toEqual(["w x"]);
    expect(v.truncated).toBeUndefined();
  });

  test("a queued job reports its reason, queued_s and retry_in_s; a long run is not very short", () => {
    const q = pollView(
      {
        ...base,
        status: "queued",
        queue_reason: "throttle_cooldown",
        started_at: null,
        ended_at: null,
        retry_at: 25_000,
        retry_count: 1,
      },
      20_000,
      true,
      "srv-a",
    );
    expect(q).toMatchObject({
      status: "queued",
      queue_reason: "throttle_cooldown",
      queued_s: 19,
      retry_in_s: 5,
      elapsed_s: null,
      very_short_run: false,
      empty_response: false,
    });
    expect(q.read_only).toBeUndefined();
    const long = pollView({ ...base, ended_at: 100_000, final_response: "ok" }, 200_000, true);
    expect(long.very_short_run).toBe(false);
    expect(long.empty_response).toBe(false);
    const running = pollView({ ...base, status: "running", ended_at: null }, 20_000, true);
    expect(running.last_activity_age_s).toBe(8);
  });
});

test("a key the head's slice cuts is dropped whole, never pulled inside the cap by collapsed white space", () => {
  const held = "localkey-0123456789abcdef";
  knowSecrets([held]);
  for (const pad of [500, 511, 2040]) {
    const out = sanitizeLine(`${" ".repeat(pad)}${held} tail`, 64);
    expect({ pad, out }).toEqual({ pad, out: expect.not.stringContaining("localkey") });
  }
  // Minified JSON past the head keeps its words up to the cut one.
  expect(sanitizeLine(`{"a":"${"x".repeat(600)}","b":"y"}`, 64)).toStartWith('{"a":"');
});
