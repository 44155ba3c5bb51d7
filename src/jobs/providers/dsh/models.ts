import { readFileSync } from "node:fs";
import { z } from "zod";
import { DlError } from "../../../errors.ts";
import { once } from "../../../once.ts";

/**
 * The dsh models allowlist (DELEGATE_DSH_MODELS_FILE), the same shape as the launcher's
 * own models.json:
 *
 *   { "models": { "<alias>": { "model": "<name the launcher passes on>", "enabled": true,
 *                              "description": "…" } } }
 *
 * A task names an alias (or the real model name of an entry); the launcher is given the
 * alias and resolves it itself. Only enabled entries run.
 * Xiaomi's MiMo models are refused for automated dispatch whatever the file says: the
 * Token Plan's terms forbid automation, and a file someone copied from a manual setup
 * must not turn that into a breach.
 */
const entrySchema = once(() =>
  z.strictObject({
    model: z.string().min(1).max(200),
    enabled: z.boolean(),
    description: z.string().max(2000).optional(),
  }),
);
const fileSchema = once(() => z.object({ models: z.record(z.string().min(1).max(200), entrySchema()) }));

export interface DshModel {
  alias: string;
  model: string;
  enabled: boolean;
}

const XIAOMI = /^(mimo|xiaomi)/;

/**
 * A model name as written, cleaned: Unicode compatibility forms folded (a fullwidth "ｍｉｍｏ"
 * is "mimo"), control and invisible format characters dropped, outer spaces trimmed.
 * This is what the launcher is handed.
 */
function cleanModelName(name: string): string {
  return name
    .normalize("NFKC")
    .replace(/[\p{Cc}\p{Cf}]/gu, "")
    .trim();
}

/** The form names are compared in, for the allowlist and the MiMo refusal alike: cleaned, lower case. */
function modelKey(name: string): string {
  return cleanModelName(name).toLowerCase();
}

export function isXiaomi(name: string): boolean {
  const key = modelKey(name);
  return XIAOMI.test(key.split("/").at(-1) ?? key) || XIAOMI.test(key);
}

/** A name that starts with "-" would reach the launcher's argv as a flag. */
function flagLike(name: string): boolean {
  return modelKey(name).startsWith("-");
}

/** Reads and checks the file; a missing file is `null` (every model is then refused). */
export function loadDshModels(file: string): Map<string, DshModel> | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new DlError(
      "bad_config",
      `the dsh models file ${file} cannot be read (${(e as NodeJS.ErrnoException).code})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new DlError("bad_config", `the dsh models file ${file} is not valid JSON; see examples/dsh-models.json`);
  }
  const parsed = fileSchema().safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DlError(
      "bad_config",
      `the dsh models file ${file} is malformed at ${issue.path.join(".") || "the top level"}: ${issue.message}; see examples/dsh-models.json`,
    );
  }
  // A Map, so an alias called "__proto__" or "constructor" is just a name; keyed by the
  // compared form, so " MiMo-v2" and "mimo-v2" are one name. The alias itself stays as
  // written: the launcher looks it up in its own copy of this file.
  const out = new Map<string, DshModel>();
  for (const [alias, e] of Object.entries(parsed.data.models))
    out.set(modelKey(alias), { alias, model: cleanModelName(e.model), enabled: e.enabled });
  return out;
}

/** The model a task may run, by alias or real name; refuses with what would be accepted. */
export function resolveDshModel(requested: string, models: Map<string, DshModel> | null, file: string): DshModel {
  if (flagLike(requested)) throw flagRefusal(requested);
  if (isXiaomi(requested)) throw xiaomiRefusal(requested);
  if (!models) {
    throw new DlError(
      "bad_input",
      `no dsh model is allowed: the models file ${file} does not exist; create it (shape: examples/dsh-models.json) or set DELEGATE_DSH_MODELS_FILE`,
    );
  }
  const key = modelKey(requested);
  const found = models.get(key) ?? [...models.values()].find((m) => modelKey(m.model) === key);
  const enabled = enabledList(models);
  if (!found)
    throw new DlError("bad_input", `unknown dsh model ${JSON.stringify(requested)}; enabled in ${file}: ${enabled}`);
  if (isXiaomi(found.model) || isXiaomi(found.alias)) throw xiaomiRefusal(requested);
  const flag = [found.alias, found.model].find(flagLike);
  if (flag) throw flagRefusal(flag);
  if (!found.enabled) {
    throw new DlError(
      "bad_input",
      `dsh model ${JSON.stringify(requested)} is disabled in ${file}; enabled: ${enabled}`,
    );
  }
  return found;
}

/** Aliases a task may name: enabled, and not a MiMo/Xiaomi model (refused whatever the flag). */
export function enabledAliases(models: Map<string, DshModel>): string[] {
  return [...models.values()]
    .filter((m) => m.enabled && !isXiaomi(m.alias) && !isXiaomi(m.model) && !flagLike(m.model) && !flagLike(m.alias))
    .map((m) => m.alias);
}

function enabledList(models: Map<string, DshModel>): string {
  const names = enabledAliases(models);
  return names.length ? names.join(", ") : "(none)";
}

function flagRefusal(name: string): DlError {
  return new DlError(
    "bad_input",
    `dsh model ${JSON.stringify(name)} is refused: a model name may not start with "-" (the launcher would read it as an option)`,
  );
}

function xiaomiRefusal(name: string): DlError {
  return new DlError(
    "bad_input",
    `dsh model ${JSON.stringify(name)} is refused: Xiaomi MiMo models may not be dispatched automatically (the Token Plan's terms forbid automation), whatever the models file says`,
  );
}
