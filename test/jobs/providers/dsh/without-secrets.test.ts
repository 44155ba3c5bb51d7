import { expect, test } from "bun:test";
import { withoutSecrets } from "../../../../src/jobs/secrets.ts";

/** What a dsh run reports never holds a value the launcher was given by name. */
test("every given value is cut from the answer and from every string of its usage", () => {
  const key = "dsk-4711-secret";
  const r = withoutSecrets(
    {
      finalResponse: `auth failed for ${key}; retry with ${key}`,
      usage: { diff_stat: `+${key}`, tokens: { note: [key, 3] }, wall_s: 1 },
    },
    [key],
  );
  expect(r.finalResponse).toBe("auth failed for [redacted]; retry with [redacted]");
  expect(r.usage).toEqual({ diff_stat: "+[redacted]", tokens: { note: ["[redacted]", 3] }, wall_s: 1 });
});

test("values too short to be a key are left alone; nothing given, nothing changes", () => {
  const parsed = { finalResponse: "exit 1 in 1 s", usage: null };
  expect(withoutSecrets(parsed, ["1", "in"])).toEqual(parsed);
  expect(withoutSecrets({ finalResponse: null }, ["long-enough-key"])).toEqual({
    finalResponse: null,
    usage: undefined,
  });
});
