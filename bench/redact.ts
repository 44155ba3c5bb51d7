/**
 * bench/redact — what `redact` costs on hostile output: a megabyte of escapes (`\\`,
 * `\u005c`, `%25`, `&#37;`), of line breaks, and of a JSON log holding escapes, each as a
 * ratio against a megabyte of plain text in this same run. cutKnown reads text up to four
 * levels down; each level must be one pass, so every ratio stays a small constant.
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
