import { z } from "zod";
import { once } from "../../../once.ts";
import { errorFields, nullableNumber, nullableString } from "../../tool-schemas.ts";

/** delegate_to_gemini: the reference's fields plus why a job failed. */
export const geminiJobOutput = once(() =>
  z
    .object({
      id: z.string().optional(),
      status: z.string().optional(),
      response: nullableString(),
      truncated: z.boolean().optional(),
      conversation_id: nullableString(),
      usage: z.unknown().optional(),
      duration_s: nullableNumber(),
      exit_code: nullableNumber(),
      warnings: z.array(z.unknown()).optional(),
      ...errorFields(),
    })
    .loose(),
);
