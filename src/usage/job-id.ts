import { PROVIDERS } from "../providers.ts";

/** How many hex digits follow a provider's prefix (submit.ts draws 5 random bytes). */
const JOB_ID_HEX_DIGITS = 10;

const SHAPE = new RegExp(
  `^(${PROVIDERS.map((d) => d.idPrefix.slice(0, -1)).join("|")})-[0-9a-f]{${JOB_ID_HEX_DIGITS}}$`,
);

/** The id shapes in words, for an error that tells the user what an id looks like. */
const JOB_ID_SHAPES = `${PROVIDERS.map((d) => `${d.idPrefix}… (${d.name})`).join(", ")}, each prefix followed by ${JOB_ID_HEX_DIGITS} hex digits, e.g. cx-3f9a2b1c4d`;

/** Why `id` cannot be a job id, or null when it has a job id's shape. */
export function jobIdProblem(id: string): string | null {
  if (SHAPE.test(id)) return null;
  return `${JSON.stringify(id.slice(0, 40))} is not a job id; job ids are ${JOB_ID_SHAPES}`;
}

/** A synchronous delegation's id (delegate_to_local_agent, each delegate_batch task, delegate_to_provider): its transcript's name. */
export const DELEGATION_ID_PREFIX = "dg-";
const DELEGATION_SHAPE = new RegExp(`^${DELEGATION_ID_PREFIX}[0-9a-f]{${JOB_ID_HEX_DIGITS}}$`);

export function isDelegationId(id: string): boolean {
  return DELEGATION_SHAPE.test(id);
}

/** Why `id` is neither a job id nor a delegation id (what dl logs takes), or null. */
export function logIdProblem(id: string): string | null {
  if (isDelegationId(id) || jobIdProblem(id) === null) return null;
  return `${JSON.stringify(id.slice(0, 40))} is neither a job id nor a delegation id; job ids are ${JOB_ID_SHAPES}; a delegation's id is ${DELEGATION_ID_PREFIX} followed by ${JOB_ID_HEX_DIGITS} hex digits`;
}
