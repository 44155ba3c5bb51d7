/**
 * bench/redact — what `redact` costs on hostile output: a megabyte of escapes (`\\`,
 * `\u005c`, `%25`, `&#37;`), of line breaks, of a JSON log holding escapes, and of names
 * that say credential whose values never qualify (no white space ends their run), each as a
 * ratio against a megabyte of plain text in this same run. cutKnown reads text up to four
 * levels down; each level must be one pass, so every ratio stays a small constant.
 *
 * Then what learning costs once 256 values are learned (output that names a new
 * credential on every line): a call that learns one value, as a ratio against a call on
 * a line of the same size that learns none. Learned values are kept in generations of 32,
 * so a value learned recompiles one generation's pattern, not all 256 values'. Last, plain
 * text once 2,000 more were learned (none is forgotten), against plain text before.
 *
 *   bun bench/redact.ts
 */
import { knowSecrets, redact } from "../src/sys/redact.ts";

const MB = 1 << 20;
const fill = (unit: string) => unit.repeat(Math.floor(MB / unit.length));

knowSecrets(["bench-known-value-7731"]);
const inputs: [string, string][] = [
  ["plain text", fill("hello world ")],
  ["\\\\ (JSON backslash)", fill("\\\\")],
  ["\\u005c", fill("\\u005c")],
  ["%25", fill("%25")],
  ["&#37;", fill("&#37;")],
  ["line breaks", fill("\n")],
  ["JSON log with escapes", fill('{"msg":"line \\"quoted\\" 50% done\\n"}\n')],
  // Names whose values never qualify, with no white space to end a run: each character must be read a bounded number of times.
  ["password:x, (no value)", fill("password:x,")],
  ["password:password:", fill("password:password:")],
  ["quotes never closed", fill("a_token='bbbb ")],
  ["path-shaped values", fill("API_KEY=/nonexist/a1 ")],
];

/** The best of five runs, in milliseconds (the least disturbed by other work on the machine). */
function best(text: string): number {
  let ms = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    redact(text);
    ms = Math.min(ms, performance.now() - start);
  }
  return ms;
}

best(inputs[0]![1]); // warm the JIT first: the baseline is then measured as the rest are
const baseline = best(inputs[0]![1]);
for (const [name, text] of inputs) {
  const ms = best(text);
  console.log(
    `${name.padEnd(24)} ${ms.toFixed(1).padStart(8)} ms/MB  ${(ms / baseline).toFixed(1).padStart(6)} x plain`,
  );
}

/** Milliseconds per call of `redact` over `lines`, each called once. */
function perCall(lines: string[]): number {
  const start = performance.now();
  for (const l of lines) redact(l);
  return (performance.now() - start) / lines.length;
}

for (let i = 0; i < 256; i++) redact(`token=bench-fill-${i}-abcdefgh`);
const n = 200;
const learning = perCall(Array.from({ length: n }, (_, i) => `token=bench-new-${i}-abcdefgh`));
const plainLine = perCall(Array.from({ length: n }, (_, i) => `tokens=bench-old-${i}-abcdefgh`));
console.log(
  `${"a line that learns".padEnd(24)} ${learning.toFixed(3).padStart(8)} ms/call ${(learning / plainLine).toFixed(1).padStart(6)} x a line that learns nothing (${plainLine.toFixed(3)} ms)`,
);

// Learned values are never forgotten: past 256 they are found by their first characters,
// one lookup per character of text. A megabyte of plain text once 2,000 values were
// learned past the generations (a flood of named values), against plain text before any.
for (let i = 0; i < 2_000; i++) redact(`T${i}_TOKEN=flood${i}vAlue${i}z`);
const flooded = best(inputs[0]![1]);
console.log(
  `${"plain, 2,000 past 256".padEnd(24)} ${flooded.toFixed(1).padStart(8)} ms/MB  ${(flooded / baseline).toFixed(1).padStart(6)} x plain before any was learned`,
);
