import type { z } from "zod";
import { MAX_MESSAGE_BYTES } from "../result-limits.ts";

/**
 * A JSON string costs at most 6 bytes per character on the wire (`\u0001`), so a call
 * whose strings total at most this many characters always fits in one message, with
 * room for the JSON around them. Schemas check it, so a valid call is never oversize.
 */
const CALL_MAX_CHARS = Math.floor((MAX_MESSAGE_BYTES * 0.75) / 6);

/** Characters in every string inside `v` (task lists are plain objects of strings). */
function stringChars(v: unknown): number {
  if (typeof v === "string") return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + stringChars(x), 0);
  if (v && typeof v === "object") return Object.values(v).reduce((n: number, x) => n + stringChars(x), 0);
  return 0;
}

/** `schema` (a task list) refusing lists whose strings together exceed CALL_MAX_CHARS. */
export function boundedTotal<T extends z.ZodType>(schema: T): T {
  return schema.refine((v) => stringChars(v) <= CALL_MAX_CHARS, {
    error: (issue) =>
      `the tasks total ${stringChars(issue.input)} characters, over the ${CALL_MAX_CHARS} one call may carry; split them into several calls or put long inputs in files`,
  }) as unknown as T;
}
