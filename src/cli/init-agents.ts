import { closeSync, constants, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import coder from "../../examples/agents/coder.md" with { type: "text" };
import reviewer from "../../examples/agents/reviewer.md" with { type: "text" };
import testWriter from "../../examples/agents/test-writer.md" with { type: "text" };

/** The example agents, built into the binary: `dl init` works without the repository. */
export const EXAMPLE_AGENTS: readonly { file: string; text: string }[] = [
  { file: "coder.md", text: coder },
  { file: "reviewer.md", text: reviewer },
  { file: "test-writer.md", text: testWriter },
];

export type CopyReport = { dir: string; copied: string[]; kept: string[]; failed: string[]; problem?: string };

/**
 * Copies the example agents into `dir`, never over a file already there (O_EXCL: not even
 * one that appears meanwhile, nor through a link someone left in its place).
 */
export function copyExampleAgents(dir: string): CopyReport {
  const report: CopyReport = { dir, copied: [], kept: [], failed: [] };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    report.failed = EXAMPLE_AGENTS.map((a) => a.file);
    report.problem = `${String(err.code ?? "error").slice(0, 20)} on ${typeof err.path === "string" ? err.path : dir}`;
    return report;
  }
  for (const a of EXAMPLE_AGENTS) {
    let fd: number;
    try {
      fd = openSync(
        join(dir, a.file),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
    } catch (e) {
      ((e as NodeJS.ErrnoException).code === "EEXIST" ? report.kept : report.failed).push(a.file);
      continue;
    }
    try {
      writeSync(fd, a.text);
      report.copied.push(a.file);
    } finally {
      closeSync(fd);
    }
  }
  return report;
}
