import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BashCounters, runToolCalls } from "../../src/agent/tool-calls.ts";
import type { AgentTool } from "../../src/agent/tools/types.ts";
import { TranscriptFile } from "../../src/agent/transcript.ts";
import { keepOutputTail } from "../../src/jobs/engine/output-tail.ts";
import { parseAgyOutput } from "../../src/jobs/providers/gemini/output.ts";
import { ANSWER_MAX_CHARS } from "../../src/mcp/result-limits.ts";
import { boundResult } from "../../src/mcp/result-spill.ts";
import { scrubTree } from "../../src/sys/private-tree.ts";
import { runGroup } from "../../src/sys/process.ts";
import { holdsSecret, knowSecrets, redact } from "../../src/sys/redact.ts";
import { outputExcerpt, redactedTail, sanitizeBlock, sanitizeLine } from "../../src/sys/sanitize.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * A known key is recognized whole: cut in half by a cap, the half that is left is no
 * longer a key any channel's redaction can find. So every place that cuts text on its way
 * out (a transcript field, a progress line, an output tail, a cleaned line, an answer's
 * cap) redacts before it cuts. Each attack puts the key across the cut.
 */
const KEY = "Qk7vZp-known-key-31415";
knowSecrets([KEY]);

/** No piece of the key (4 characters or more, from either end) is left in `text`. */
function noPieceOf(text: string): void {
  for (let n = 4; n <= KEY.length; n++) {
    expect(text).not.toContain(KEY.slice(0, n));
    expect(text).not.toContain(KEY.slice(-n));
  }
}

describe("redacted before it is cut", () => {
  test("a tool call's target in the transcript and the progress line", async () => {
    const seen: string[] = [];
    const echo: AgentTool = {
      spec: { name: "run_bash", description: "", input_schema: { type: "object", properties: {} } },
      run: async () => ({ content: "ok", is_error: false, bash: { exitCode: 0, timedOut: false } }),
    };
    const ctx = { workdir: realpathSync(tempDir("cuts")), allowEscape: false, signal: new AbortController().signal };
    const bash: BashCounters = { bashCalls: 0, bashFailures: 0, lastBashExit: null };
    for (const at of [78, 398]) {
      const command = `${"x".repeat(at)}${KEY}`;
      const { names } = await runToolCalls(
        new Map([["run_bash", echo]]),
        [{ type: "tool_use", id: "a", name: "run_bash", input: { command } }],
        ctx,
        bash,
        { record: (r) => seen.push(r.target) },
      );
      noPieceOf(names.join("\n"));
    }
    noPieceOf(seen.join("\n"));
  });

  test("a transcript field at its cap", () => {
    const file = join(tempDir("cuts"), "t.jsonl");
    const t = new TranscriptFile(file);
    t.tool({ n: 1, tool: "run_bash", target: `${"x".repeat(295)}${KEY}`, exit: 0, bytes_in: 1, bytes_out: 1, ms: 1 });
    t.turn({ n: 1, model: `${"m".repeat(115)}${KEY}`, in: 1, cached: 0, out: 1, stop: "end_turn", ms: 1 });
    t.close();
    noPieceOf(readFileSync(file, "utf8"));
  });

  test("the start of a CLI job's output tail, and a failed job's excerpt", () => {
    const dir = tempDir("cuts");
    keepOutputTail(dir, {
      stdout: `${KEY}${"y".repeat(16_384 - 6)}`,
      stderr: `${KEY}${"z".repeat(8_192 - 6)}`,
      exitCode: 1,
    });
    noPieceOf(readFileSync(join(dir, "output.log"), "utf8"));
    noPieceOf(outputExcerpt({ stdout: `${KEY}${"y".repeat(1_200 - 6)}`, stderr: "" }));
  });

  test("a key across the start of the read margin, with what redaction cuts out after it shrinking the text", () => {
    // The tail's window starts inside the key; two 4,090-character key-shaped strings after it
    // are each cut to a marker, so the redacted window is shorter than the tail kept.
    for (const n of [16_384, 8_192, 2_000, 1_200]) {
      const window = n + 4_096;
      const shrink = ` sk-${"a1B2".repeat(Math.floor(window / 12))}x `;
      const after = `${shrink}${shrink}${"w".repeat(window - 2 * shrink.length - 11)}`;
      const text = `${"f".repeat(5_000)}${KEY}${after}`;
      const dir = tempDir("cuts");
      keepOutputTail(dir, { stdout: text, stderr: text, exitCode: 1 });
      noPieceOf(readFileSync(join(dir, "output.log"), "utf8"));
      noPieceOf(outputExcerpt({ stdout: text, stderr: "" }));
      noPieceOf(redactedTail(text, n));
    }
  });

  test("a failed agy run's excerpt: its stderr is redacted before its last 2,000 characters are kept", () => {
    const stderr = `${"e".repeat(500)} key=${KEY}${" x".repeat(995)}`; // the key across the 2,000th character from the end
    const out = parseAgyOutput({ stdout: "", stderr, exitCode: 1 });
    expect(JSON.stringify(out)).toContain("agy");
    noPieceOf(JSON.stringify(out));
  });

  test("a value a child names past what is kept of its output (the capture's cap) is learned all the same", async () => {
    const pw = "Dr0pped-pass-7731q";
    // The child's pause is no wait for a condition: it makes the name reach dl in two reads
    // of the pipe, so the text before a dropped chunk must be read with it. Should the two
    // reads merge on a loaded machine, the value is still learned and the test still holds.
    const r = await runGroup({
      argv: ["sh", "-c", `head -c 5000 /dev/zero | tr '\\0' x; echo; printf 'DB_PASS'; sleep 0.05; echo "WORD=${pw}"`],
      cwd: "/",
      env: { PATH: "/usr/bin:/bin" },
      stdoutCap: 1024,
    });
    expect(r.stdout.text()).not.toContain("DB_PASS");
    expect(redact(`the password is ${pw}`)).toBe("the password is <redacted>");
  });

  test("a CLI job's tail cuts a value its output named long before the tail (Codex's `cat .env` early on)", () => {
    const dir = tempDir("cuts");
    const pw = "Tr0ub4dor-tail-pass91";
    const events = Array.from({ length: 60 }, (_, i) => `{"event":${i},"pad":"${"p".repeat(400)}"}`).join("\n");
    keepOutputTail(dir, {
      stdout: `DB_PASSWORD="${pw}"\n${events}\n{"msg":"connected with ${pw} to the db"}\n`,
      stderr: "",
      exitCode: 0,
    });
    const kept = readFileSync(join(dir, "output.log"), "utf8");
    expect(kept).toContain("connected with");
    expect(kept).not.toContain(pw);
  });

  test("a job folder's files are cut of a value one of them names, whatever order the walk takes", () => {
    const dir = tempDir("cuts-tree");
    const pw = "Tr0ub4dor-tree-pass92";
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `log${i}.txt`), `said ${pw} here\n`);
    writeFileSync(join(dir, "m.env"), `DB_PASSWORD=${pw}\n`);
    scrubTree(dir);
    const left = readdirSync(dir).filter((n) => readFileSync(join(dir, n), "utf8").includes(pw));
    expect(left).toEqual([]);
  });

  test("an entry of a job folder named after a value the job's files name, or a key, goes whole", () => {
    const dir = tempDir("cuts-names");
    const pw = "Kj4hGf6dSa-named-77";
    writeFileSync(join(dir, "run.log"), `DB_PASSWORD=${pw}\n`);
    writeFileSync(join(dir, pw), "");
    mkdirSync(join(dir, `copy-${KEY}`));
    writeFileSync(join(dir, `copy-${KEY}`, "inner.txt"), "x");
    writeFileSync(join(dir, "plain.txt"), "x");
    const removed = scrubTree(dir);
    expect(readdirSync(dir).sort()).toEqual(["plain.txt", "run.log"]);
    expect(removed.length).toBe(2);
  });

  test("a cleaned line at its cap, and an answer at the result's cap", async () => {
    noPieceOf(sanitizeLine(`${"x".repeat(250)}${KEY}`, 256));
    const answer = `${"x".repeat(ANSWER_MAX_CHARS - 6)}${KEY} and more`;
    const r = await boundResult({ final_response: answer } as never, tempDir("cuts"));
    noPieceOf(r.final_response);
    noPieceOf(readFileSync(r.final_response_path!, "utf8"));
  });
});

describe("a key split by a terminal's colour codes", () => {
  test("is cut as the terminal shows it: grep --color's output, a held key, the tail kept of a job's output", () => {
    const grep = ".bashrc:export X=\x1b[01;31m\x1b[Ksk-ant\x1b[m\x1b[K-api03-Tc9dQ2mLx7Rw4Kp8Vz1Ny6Hb3Gj5Fs0Ae";
    expect(redact(grep)).toBe(".bashrc:export X=<redacted>");
    knowSecrets(["Zq8vHeldKey7734xyzW"]);
    const split = "token: Zq8vHeld\x1b[1;32mKey7734\x1b[0mxyzW done";
    expect(redact(split)).toBe("token: <redacted> done");
    const tail = sanitizeBlock(redactedTail(`${"x".repeat(5000)}\n${split}\n`, 2000));
    expect(tail).not.toContain("Key7734");
    expect(holdsSecret("plain \x1b[1mbold\x1b[0m text")).toBe(false);
  });
});
