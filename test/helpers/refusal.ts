import { isDlError } from "../../src/errors.ts";

/** The message of the DlError `fn` throws; fails the test when it throws nothing (or something else). */
export function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isDlError(e)) return e.message;
    throw e;
  }
  throw new Error("expected a refusal");
}
