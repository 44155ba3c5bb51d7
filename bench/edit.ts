/**
 * bench/edit — what a one-line change costs with edit_file against write_file, through
 * the real `dist/dl run` against a scripted Anthropic-format fake on 127.0.0.1.
 *
 * A scripted agent makes 10 one-line changes to a 3,000-line file (~120 KB), one change
 * per turn, then replies with text. It runs twice in this one run: once with edit_file
 * (old line → new line), once with write_file (the whole file with the line changed),
 * which is what a model without edit_file must do. For both: the model's output bytes
 * (the assistant turns it produced, as sent back to it) and the bytes prefilled and new
 * to the backend, measured as bench/prefix measures them (fixture/prefix-cache.ts).
 * Both runs must leave the same file.
 *
 * Aims (issue 24): >= 20x fewer output bytes with edit_file; its prefilled bytes
 * <= 1.5 x its novel bytes.
 *
 *   bun build.ts && bun bench/edit.ts
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, reply, startFakeModel } from "../test/fixture/fake-model.ts";
import { dlRunHome } from "./fixture/dl-run-home.ts";
import { measure } from "./fixture/prefix-cache.ts";

const LINES = 3000;
const CHANGES = 10;
const MODEL = "glm-bench";

const { dl, base, home } = dlRunHome("edit", { name: "editor", prompt: "Make the changes asked for." });

const original = Array.from({ length: LINES }, (_, i) => `export const value${i} = compute(${i}, "unchanged");`);
const changedLine = (k: number) => 150 + k * 290; // spread over the file
const edited = (upTo: number) =>
  original.map((l, i) => {
    const k = (i - 150) / 290;
    return Number.isInteger(k) && k >= 0 && k < upTo ? l.replace('"unchanged"', '"changed"') : l;
  });
const text = (lines: string[]) => `${lines.join("\n")}\n`;

const fake = await startFakeModel();
try {
  const withEdit = await session("edit_file", (k) =>
    reply.tool("edit_file", {
      path: "big.ts",
      old_string: original[changedLine(k)]!,
      new_string: original[changedLine(k)]!.replace('"unchanged"', '"changed"'),
    }),
  );
  const withWrite = await session("write_file", (k) =>
    reply.tool("write_file", { path: "big.ts", content: text(edited(k + 1)) }),
  );
  report(withEdit, withWrite);
} finally {
  await fake.stop();
  rmSync(base, { recursive: true, force: true });
}

/** One 10-change session through dl run; returns what the backend received. */
async function session(name: string, change: (k: number) => ReturnType<typeof reply.tool>) {
  const dir = join(base, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "big.ts"), text(original));
  fake.reset();
  for (let k = 0; k < CHANGES; k++) fake.script(change(k));
  fake.script(reply.text("Made the 10 changes."));
  const proc = Bun.spawn([dl, "run", "editor", "make the 10 changes", "--workdir", dir, "--model", MODEL], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, DELEGATE_LOCAL_URL: fake.anthropicUrl },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`dl run exited ${code}: ${err.slice(-2000)}`);
  if (readFileSync(join(dir, "big.ts"), "utf8") !== text(edited(CHANGES))) throw new Error(`${name} left another file`);
  const requests: RecordedRequest[] = [...fake.requests];
  const results = JSON.stringify(requests.at(-1)!.body.messages);
  if (results.includes('"is_error":true')) throw new Error(`${name}: a tool call failed`);
  return { name, output: outputBytes(requests.at(-1)!), ...measure(requests) };
}

/** Bytes of the assistant turns in the last request: everything the model produced, bar its final reply. */
function outputBytes(last: RecordedRequest): number {
  const messages = last.body.messages as { role: string; content: unknown }[];
  return messages.filter((m) => m.role === "assistant").reduce((n, m) => n + JSON.stringify(m.content).length, 0);
}

type Row = Awaited<ReturnType<typeof session>>;

function report(e: Row, w: Row): void {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`.padStart(10);
  console.log(`bench/edit — ${CHANGES} one-line changes to a ${LINES}-line file through dist/dl run (${MODEL})`);
  console.log("tool         model output   prefilled      novel  prefill/novel");
  for (const r of [e, w]) {
    console.log(
      `${r.name.padEnd(11)} ${kb(r.output)} ${kb(r.prefill)} ${kb(r.novel)} ${(r.prefill / r.novel).toFixed(2).padStart(13)}`,
    );
  }
  const outRatio = w.output / e.output;
  const okOut = outRatio >= 20;
  const okPrefill = e.prefill <= 1.5 * e.novel;
  console.log(
    `aim: edit_file output >= 20x smaller: ${outRatio.toFixed(0)}x ${okOut ? "met" : "MISSED"}; ` +
      `edit_file prefilled <= 1.5 x novel: ${(e.prefill / e.novel).toFixed(2)} ${okPrefill ? "met" : "MISSED"}`,
  );
  console.log(`edit_file vs write_file: ${(w.prefill / e.prefill).toFixed(1)}x fewer bytes prefilled`);
  if (!okOut || !okPrefill) process.exitCode = 1;
}
