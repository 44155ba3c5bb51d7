import { describe, expect, test } from "bun:test";
import type { ArgsDef } from "citty";
import { snakeKeys } from "../../src/cli/status-report.ts";
import { argsProblem } from "../../src/cli/strict-args.ts";
import { closest, editDistance } from "../../src/cli/suggest.ts";

const RUN: ArgsDef = {
  agent: { type: "positional", required: true },
  task: { type: "positional", required: true },
  workdir: { type: "string" },
  "max-turns": { type: "string" },
  mode: { type: "enum", options: ["fast", "slow"] },
  json: { type: "boolean", default: false },
};
const WAIT: ArgsDef = { ids: { type: "positional", required: false }, timeout: { type: "string" } };

describe("argsProblem", () => {
  test("accepts what citty would parse right", () => {
    for (const argv of [
      ["a", "t"],
      ["a", "t", "--workdir", "/w", "--json"],
      ["--workdir=/w", "a", "t", "--max-turns", "3"],
      ["a", "t", "--maxTurns", "3"],
      ["a", "t", "--no-json", "--json=false"],
      ["a", "--", "--not-a-flag"],
      ["a", "t", "--mode", "fast"],
      ["a", "t", "--workdir", "-"],
    ])
      expect(argsProblem(argv, RUN)).toBeNull();
    expect(argsProblem(["x", "y", "z"], WAIT, true)).toBeNull();
    expect(argsProblem(["--timeout", "-1"], WAIT, true)).toBeNull();
  });

  test("names the first problem, with the closest flag for a typo", () => {
    expect(argsProblem(["a", "t", "--workdri", "/w"], RUN)).toBe("unknown flag --workdri; did you mean --workdir?");
    expect(argsProblem(["a", "t", "--frobnicate"], RUN)).toBe("unknown flag --frobnicate");
    expect(argsProblem(["a", "t", "--workdir"], RUN)).toBe("--workdir needs a value");
    expect(argsProblem(["a", "t", "--workdir", "--json"], RUN)).toBe("--workdir needs a value");
    expect(argsProblem(["a", "t", "--json=1"], RUN)).toBe("--json takes no value");
    expect(argsProblem(["a", "t", "--no-workdir"], RUN)).toBe("unknown flag --no-workdir; did you mean --workdir?");
    expect(argsProblem(["a", "t", "--mode", "medium"], RUN)).toBe('--mode must be one of fast, slow, not "medium"');
    expect(argsProblem([], RUN)).toBe("missing AGENT");
    expect(argsProblem(["a"], RUN)).toBe("missing TASK");
    expect(argsProblem(["a", "t", "u"], RUN)).toBe('unexpected argument "u"');
    expect(argsProblem(["x"], {})).toBe('unexpected argument "x" (this command takes no arguments)');
  });
});

describe("did you mean", () => {
  test("a swap of neighbours is one edit", () => {
    expect(editDistance("stauts", "status")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });

  test("suggests only near misses", () => {
    const cmds = ["serve", "status", "run", "wait", "reap"];
    expect(closest("stauts", cmds)).toBe("status");
    expect(closest("sever", cmds)).toBe("serve");
    expect(closest("--dryrun", ["--dry-run", "--json"])).toBe("--dry-run");
    expect(closest("frobnicate", cmds)).toBeUndefined();
    expect(closest("x", cmds)).toBeUndefined();
  });
});

test("snakeKeys changes camelCase humps only", () => {
  expect(
    snakeKeys({ codingModel: "m", pools: { "glm-coding-plan": 2, DELEGATE_X: 1 }, list: [{ maxQueue: 1 }] }),
  ).toEqual({ coding_model: "m", pools: { "glm-coding-plan": 2, DELEGATE_X: 1 }, list: [{ max_queue: 1 }] });
});

test("a suggestion uses the flag's own spelling", () => {
  expect(argsProblem(["a", "t", "--maxturns", "3"], RUN)).toBe("unknown flag --maxturns; did you mean --max-turns?");
});
