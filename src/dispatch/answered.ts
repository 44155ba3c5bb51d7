/**
 * Who really answered. A gateway may route an alias to another model (Bifrost fallbacks,
 * a LiteLLM router group), and the failure mode of such a hop is that nobody notices, so a
 * result whose answerer differs from the alias asked for carries a visible note:
 *
 *   fallback_note = "answered_by: X (requested Y)"
 *
 * X is, in order: a routing header naming the model (`x-bifrost-routing-info-model`, or any
 * captured routing header ending in `-model`), else the `model` of message_start / the first
 * chunk. With neither, nothing is claimed.
 *
 * Same-model rule: names are compared trimmed and lower-cased, after dropping every
 * leading `provider/` segment (`openai/gpt-x` = `gpt-x`, `anthropic/claude-y` = `claude-y`).
 * Nothing else is folded: `glm-5.2` answering for `glm-coding-plan` is reported, because
 * whether that is "the same model" is exactly what the user should see and judge.
 */

export type AnswerSource = { model: string; routing: Readonly<Record<string, string>> };

export type WhoAnswered = {
  /** The answering model as reported ("" when the backend named none). */
  answered_by: string;
  /** Set only when the answerer differs from the requested alias. */
  fallback_note?: string;
};

const ROUTING_MODEL = "x-bifrost-routing-info-model";

export function normalizeModelName(name: string): string {
  const n = name.trim().toLowerCase();
  const slash = n.lastIndexOf("/");
  return slash >= 0 ? n.slice(slash + 1) : n;
}

function sameModel(a: string, b: string): boolean {
  return normalizeModelName(a) === normalizeModelName(b);
}

function routedModel(routing: Readonly<Record<string, string>>): string {
  const exact = routing[ROUTING_MODEL];
  if (exact?.trim()) return exact.trim();
  for (const [name, value] of Object.entries(routing)) {
    if (name.toLowerCase().endsWith("-model") && value.trim()) return value.trim();
  }
  return "";
}

/** One line, bounded: the names come from a remote server. */
function clean(s: string): string {
  const flat = s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 117)}...` : flat;
}

export function whoAnswered(requested: string, res: AnswerSource): WhoAnswered {
  const answered = clean(routedModel(res.routing) || res.model);
  if (answered === "" || sameModel(answered, requested)) return { answered_by: answered };
  return { answered_by: answered, fallback_note: `answered_by: ${answered} (requested ${clean(requested)})` };
}
