import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { lastResortLine } from "../../src/cli/last-resort.ts";
import { knowSecrets } from "../../src/sys/redact.ts";

/**
 * What escapes every command's own handling — a rejection no one awaited, a throw on a
 * timer — ends the process with one line naming the command, the error and what to run,
 * and exit 1, instead of Bun's page of minified source (how `dl status` failed for a user
 * whose TMPDIR it could not write). Real processes: the handler is installed as runCli
 * installs it, then the stray error happens.
 */
const MODULE = join(import.meta.dir, "..", "..", "src", "cli", "last-resort.ts");

async function stray(kind: "rejection" | "throw") {
  const body =
    kind === "rejection"
      ? `Promise.reject(Object.assign(new Error("EACCES: permission denied, mkdtemp '/tmp/dl-x'\\n    at secret.js:1"), { code: "EACCES" }));`
      : `setTimeout(() => { throw new Error("boom sk-ant-api03-${"a".repeat(40)}"); }, 0);`;
  const script = `import { installLastResort } from ${JSON.stringify(MODULE)}; installLastResort("status"); ${body} setTimeout(() => {}, 5000);`;
  const p = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { stdout, stderr, code };
}

describe("the last-resort handler", () => {
  test("a stray rejection: one line with the command, the errno and the next command; exit 1", async () => {
    const r = await stray("rejection");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "dl status: unexpected error (EACCES: permission denied, mkdtemp '/tmp/dl-x'); run dl status to check this machine's set-up, and report it with dl --version if it persists\n",
    );
  });

  test("a throw on a timer: the same one line, with no secret in it", async () => {
    const r = await stray("throw");
    expect(r.code).toBe(1);
    expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toStartWith("dl status: unexpected error (boom ");
    expect(r.stderr).not.toContain("aaaaaaaaaa");
  });

  test("the line is one line, cut, without controls, for any thrown value", () => {
    expect(lastResortLine("", "plain string")).toStartWith("dl: unexpected error (plain string)");
    const long = lastResortLine("jobs", new Error(`\u001b[31m${"x".repeat(500)}\nsecond line`));
    expect(long.split("\n").filter(Boolean)).toHaveLength(1);
    expect(long).not.toContain("\u001b");
    expect(long.length).toBeLessThan(400);
  });

  test("a key dl holds, broken over the message's lines, is cut before the first line is taken: not even its first half is printed", () => {
    const key = "lk-last-resort-held-key-4411";
    knowSecrets([key]);
    for (const message of [
      `gateway said ${key.slice(0, 14)}\n${key.slice(14)}`,
      `said ${key.slice(0, 9)}\r\n${key.slice(9)} more`,
    ]) {
      const line = lastResortLine("run", new Error(message));
      expect({ message, line }).toEqual({ message, line: expect.stringContaining("<redacted>") });
      expect(line).not.toContain(key.slice(0, 9));
    }
  });
});
