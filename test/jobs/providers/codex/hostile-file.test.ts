import { describe, expect, test } from "bun:test";
import { symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CodexAccount } from "../../../../src/jobs/providers/codex/account.ts";
import { codexProvider } from "../../../../src/jobs/providers/codex/provider.ts";
import type { CodexQuota } from "../../../../src/jobs/providers/codex/quota.ts";
import type { JobRow } from "../../../../src/store/types.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { makeFifo } from "../../../helpers/fifo.ts";
import { runOutput } from "../../helpers.ts";

/**
 * Codex's `-o` file as a hostile process could leave it in the job dir after the CLI
 * wrote it (the real CLI replaces a file planted before its write:
 * test/reliability/hostile-files.test.ts). parse reads it through the bounded reader:
 * anything but a regular file fails the job result_file_refused, without its content.
 */
const provider = codexProvider({
  defaultModel: "gpt-test",
  allowDanger: false,
  codexHome: "/nonexistent",
  childEnv: {},
  // parse touches neither: they keep the account state classify and validate use.
  account: {} as CodexAccount,
  quota: {} as CodexQuota,
  bin: () => null,
});
const SECRET = "CODEX-LAST-MESSAGE-SECRET";
const EVENTS = '{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"from events"}}\n';

function jobDirWith(make: (file: string) => void): string {
  const dir = tempDir("codex-hostile");
  make(join(dir, "last-message.txt"));
  return dir;
}

const parse = (dir: string) => provider.parse(runOutput(dir, { stdout: EVENTS }), {} as JobRow);

describe("codex parse: last-message.txt through the bounded reader", () => {
  test("a regular file is the answer; a missing one falls back to the events", async () => {
    expect(await parse(jobDirWith((f) => writeFileSync(f, "the answer")))).toMatchObject({
      finalResponse: "the answer",
    });
    expect(await parse(jobDirWith(() => {}))).toMatchObject({ finalResponse: "from events" });
  });

  const HOSTILE: [string, (f: string) => void, RegExp][] = [
    ["a symlink to a secret", (f) => symlinkSync(secretPath(), f), /is a symbolic link/],
    ["a symlink to /dev/zero", (f) => symlinkSync("/dev/zero", f), /is a symbolic link/],
    ["a FIFO", makeFifo, /is a FIFO/],
  ];
  for (const [name, make, why] of HOSTILE) {
    test(`${name}: result_file_refused, nothing of it in the answer`, async () => {
      const p = await parse(jobDirWith(make));
      expect(p.failure).toBe("result_file_refused");
      expect(p.finalResponse).toMatch(why);
      expect(p.finalResponse).not.toContain(SECRET);
      expect(p.finalResponse).not.toContain("from events");
    });
  }

  test("a huge file is cut to the cap with a warning, not read whole", async () => {
    const dir = jobDirWith((f) => {
      writeFileSync(f, "");
      truncateSync(f, 3 * 1024 ** 3);
    });
    const p = await parse(dir);
    expect(p.failure).toBeUndefined();
    expect(p.finalResponse!.length).toBeLessThanOrEqual(1024 * 1024);
    expect(p.warnings).toEqual([expect.stringMatching(/last-message\.txt over \d+ bytes was cut/)]);
  });
});

let secretFile: string | undefined;
function secretPath(): string {
  if (!secretFile) {
    secretFile = join(tempDir("codex-secret"), "secret");
    writeFileSync(secretFile, SECRET);
  }
  return secretFile;
}
