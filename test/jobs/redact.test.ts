import { describe, expect, test } from "bun:test";
import { redactSecrets } from "../../src/jobs/redact.ts";

describe("redactSecrets", () => {
  test("keys as users name and paste them are cut out; the rest stays", () => {
    const text = [
      "export OPENAI_API_KEY=sk-abcdefghijklmnop123",
      'curl -H "Authorization: Bearer abcdefgh12345678" https://x',
      "DEEPSEEK_KEY=dsk-whatever-1234",
      "token: ghp_abcdefghijklmnopqrstuvwxyz0123",
      "known value mysecretvalue99 here",
      "plain words and paths/src/a.ts stay",
    ].join("\n");
    const out = redactSecrets(text, ["mysecretvalue99"]);
    for (const leak of [
      "sk-abcdefghijklmnop123",
      "abcdefgh12345678",
      "dsk-whatever-1234",
      "ghp_abc",
      "mysecretvalue99",
    ])
      expect(out).not.toContain(leak);
    expect(out).toContain("plain words and paths/src/a.ts stay");
    expect(out).toContain("OPENAI_API_KEY=<redacted>");
  });

  test("hostile output (a megabyte of one letter, of key-like words) is redacted and returns", () => {
    for (const s of ["A".repeat(1_000_000), "a_key".repeat(200_000)]) expect(redactSecrets(s).length).toBe(s.length);
  });
});
