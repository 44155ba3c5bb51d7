import { afterEach, expect, test } from "bun:test";
import type { ConsolaInstance, ConsolaReporter, LogObject } from "consola";
import { log, logFor, setLogLevel } from "../src/log.ts";

afterEach(() => setLogLevel("info"));

function capture(...loggers: ConsolaInstance[]): { lines: LogObject[]; restore: () => void } {
  const lines: LogObject[] = [];
  const reporter: ConsolaReporter = { log: (o) => lines.push(o) };
  const saved = loggers.map((l) => [...l.options.reporters]);
  for (const l of loggers) l.setReporters([reporter]);
  const restore = () => {
    for (const [i, l] of loggers.entries()) l.setReporters(saved[i]!);
  };
  return { lines, restore };
}

test("a tagged logger carries its tag and follows setLogLevel, even when made before it", () => {
  const codex = logFor("codex");
  const { lines, restore } = capture(log, codex);
  try {
    codex.debug("hidden at info");
    codex.warn("shown at info");
    setLogLevel("debug");
    codex.debug("shown at debug");
    setLogLevel("error");
    codex.warn("hidden at error");
    log.warn("hidden at error too");
  } finally {
    restore();
  }
  expect(lines.map((l) => [l.tag, l.args[0]])).toEqual([
    ["codex", "shown at info"],
    ["codex", "shown at debug"],
  ]);
});

test("silent hides even errors", () => {
  const { lines, restore } = capture(log);
  try {
    setLogLevel("silent");
    log.error("nothing");
  } finally {
    restore();
  }
  expect(lines).toHaveLength(0);
});
