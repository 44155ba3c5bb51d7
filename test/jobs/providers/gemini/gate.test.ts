import { describe, expect, test } from "bun:test";
import { DlError } from "../../../../src/errors.ts";
import { requireGeminiAllowed } from "../../../../src/jobs/providers/gemini/gate.ts";

describe("the Gemini danger gate", () => {
  test("without DELEGATE_GEMINI_ALLOW_DANGER every entry point refuses, naming the variable", () => {
    let err: unknown;
    try {
      requireGeminiAllowed(false);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DlError);
    expect((err as DlError).code).toBe("bad_config");
    expect((err as DlError).data).toMatchObject({ failure_kind: "gemini_not_allowed" });
    expect((err as DlError).message).toContain("DELEGATE_GEMINI_ALLOW_DANGER=1");
    expect((err as DlError).message).toContain("nothing was run");
  });

  test("with it, the gate lets the call through", () => {
    expect(() => requireGeminiAllowed(true)).not.toThrow();
  });
});
