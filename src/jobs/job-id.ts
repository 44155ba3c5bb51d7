import { JOB_STATE_DIRS } from "../sys/paths.ts";

/** How many hex digits follow a provider's prefix (submit.ts draws 5 random bytes). */
const JOB_ID_HEX_DIGITS = 10;

const SHAPE = new RegExp(
  `^(${JOB_STATE_DIRS.map((d) => d.idPrefix.slice(0, -1)).join("|")})-[0-9a-f]{${JOB_ID_HEX_DIGITS}}$`,
);

/** The id shapes in words, for an error that tells the user what an id looks like. */
const JOB_ID_SHAPES = `${JOB_STATE_DIRS.map((d) => `${d.idPrefix}… (${d.provider})`).join(", ")}, each prefix followed by ${JOB_ID_HEX_DIGITS} hex digits, e.g. cx-3f9a2b1c4d`;

/** Why `id` cannot be a job id, or null when it has a job id's shape. */
export function jobIdProblem(id: string): string | null {
  if (SHAPE.test(id)) return null;
  return `${JSON.stringify(id.slice(0, 40))} is not a job id; job ids are ${JOB_ID_SHAPES}`;
}
