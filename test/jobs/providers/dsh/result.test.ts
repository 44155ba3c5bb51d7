import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readDshResult } from "../../../../src/jobs/providers/dsh/result.ts";
import { tempDir } from "../../../helpers/dl.ts";

const write = (text: string) => {
  const file = join(tempDir("dsh-result"), "result.json");
  writeFileSync(file, text);
  return file;
};

test("a finished run: fields read, token counts made safe integers", async () => {
  const out = await readDshResult(
    write(
      JSON.stringify({
        status: "done",
        rc: 0,
        diff_stat: " a | 2 +-",
        summary: "ok",
        tokens: { input: 10.7, output: 1e30 },
        wall_s: 3.5,
      }),
    ),
  );
  expect(out.ok).toBe(true);
  if (!out.ok) return;
  expect(out.result.tokens).toEqual({ input: 10, output: Number.MAX_SAFE_INTEGER });
  expect(out.result.diff_stat).toBe(" a | 2 +-");
});

test("missing, malformed, non-JSON and failed results are failures with the reason", async () => {
  expect(await readDshResult(join(tempDir("dsh-result"), "result.json"))).toEqual({
    ok: false,
    reason: "the launcher wrote no result.json",
  });
  expect(await readDshResult(write('{"status": "done"}'))).toMatchObject({
    ok: false,
    reason: expect.stringMatching(/malformed at rc/),
  });
  expect(await readDshResult(write("\u001b[31mboom"))).toMatchObject({
    ok: false,
    // Never echoed: a launcher could have copied any file dl can read into it.
    reason: "result.json is not JSON",
  });
  expect(await readDshResult(write('{"status":"done","rc":0,"tokens":-1}'))).toMatchObject({ ok: false });
  const failed = await readDshResult(write('{"status":"failed","rc":1,"summary":"red"}'));
  expect(failed).toMatchObject({ ok: false, reason: "the dsh run ended failed (rc 1)" });
});
