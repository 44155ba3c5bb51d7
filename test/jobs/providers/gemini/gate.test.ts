import { describe, expect, test } from "bun:test";
import { parseConfig } from "../../../../src/config.ts";
import { DlError } from "../../../../src/errors.ts";
import { geminiRefusal } from "../../../../src/jobs/providers/gemini/gate.ts";
import { gemini } from "../../../../src/jobs/providers/gemini/index.ts";
import { defaultDeps } from "../../../../src/services.ts";

const off = { gemini: { allowDanger: false } } as const;
const on = { gemini: { allowDanger: true } } as const;

describe("the Gemini danger gate", () => {
  test("without DELEGATE_GEMINI_ALLOW_DANGER every entry point refuses, naming the variable", () => {
    const err = geminiRefusal(off);
    expect(err).toBeInstanceOf(DlError);
    expect((err as DlError).code).toBe("bad_config");
    expect((err as DlError).data).toMatchObject({ failure_kind: "gemini_not_allowed" });
    expect((err as DlError).message).toContain("DELEGATE_GEMINI_ALLOW_DANGER=1");
    expect((err as DlError).message).toContain("nothing was run");
  });

  test("with it, the gate lets the call through", () => {
    expect(geminiRefusal(on)).toBeNull();
  });

  test("decided once: the service is refused before it starts, and the tools are not listed, from the same answer", async () => {
    const config = parseConfig({ ...process.env, DELEGATE_GEMINI_ALLOW_DANGER: undefined });
    const refused = await defaultDeps(config, "test")
      .jobService(gemini)
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "bad_config", data: { failure_kind: "gemini_not_allowed" } });
    expect(gemini.unusable(config)).toContain("DELEGATE_GEMINI_ALLOW_DANGER");
  });
});
