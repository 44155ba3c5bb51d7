import { envText } from "./config-fields.ts";
import { parseSettingsText } from "./config-file.ts";
import { DlError } from "./errors.ts";
import { readSettingsFile } from "./sys/settings-file.ts";

/**
 * Where each setting comes from: the environment, then the per-user settings file, then
 * the default. Hosts pass dl their own variables and the shell its own, so the file is
 * what every dl process on the machine shares; the environment still wins, for one run.
 */
export type Source = "environment" | "file" | "default";

export type Origins = {
  file: string;
  /** The file's mode when it was read ("0600"), null when there is none. */
  fileMode: string | null;
  /** Every variable the file or the environment sets, with where its value came from. */
  byName: Record<string, Exclude<Source, "default">>;
};

/** A family of variables named by their bucket, read beside the tree. */
const BUCKET_FAMILY = /^DELEGATE_CONCURRENCY_[A-Z0-9_]+$/;

/**
 * Why `name` cannot be set in the file, or null. Only dl's own settings: not one job's
 * endpoint (DELEGATE_RUN_PROVIDER_*, set by dl serve for one child), nor the test net.
 */
function fileNameRefusal(name: string, settable: ReadonlySet<string>): string | null {
  if (name.startsWith("DELEGATE_RUN_PROVIDER_"))
    return `${name} is one job's endpoint, set by dl serve for that job; it cannot be a standing setting`;
  if (settable.has(name) || BUCKET_FAMILY.test(name)) return null;
  if (!name.startsWith("DELEGATE_")) return `${name} is not a dl setting (the file holds DELEGATE_* names only)`;
  return `${name} is not a dl setting (docs/CONFIGURATION.md lists them)`;
}

/**
 * The environment every setting is read from: the process's own variables, and for each
 * one the file sets that the environment leaves unset (or blank), the file's value.
 * `text` stands in for the file in tests (null: no file).
 */
export function withSettingsFile(
  env: Record<string, string | undefined>,
  file: string,
  settable: ReadonlySet<string>,
  text?: string | null,
): { effective: Record<string, string | undefined>; origin: Origins } {
  const read = text === undefined ? readSettingsFile(file) : text === null ? { state: "absent" as const } : null;
  if (read?.state === "refused")
    throw new DlError("bad_config", `the settings file ${file} ${read.problem}, so dl reads none of it: ${read.fix}`, {
      path: file,
      next_step: true,
    });
  const body = read === null ? (text as string) : read.state === "read" ? read.text : null;
  const fromFile = body === null ? {} : parseSettingsText(body, file, (n) => fileNameRefusal(n, settable)).values;
  const effective = { ...env };
  const byName: Origins["byName"] = {};
  for (const [name, value] of Object.entries(env))
    if (name.startsWith("DELEGATE_") && envText(value) !== undefined) byName[name] = "environment";
  for (const [name, value] of Object.entries(fromFile)) {
    if (byName[name] || envText(value) === undefined) continue;
    effective[name] = value;
    byName[name] = "file";
  }
  const fileMode = read === null ? "0600" : read.state === "read" ? read.mode : null;
  return { effective, origin: { file, fileMode, byName } };
}

/** Every setting's source, in `names` order, then the bucket family's that are set. */
export function sourcesOf(origin: Origins, names: readonly string[]): Record<string, Source> {
  const out: Record<string, Source> = {};
  for (const n of names) out[n] = origin.byName[n] ?? "default";
  for (const [n, s] of Object.entries(origin.byName)) if (!(n in out) && BUCKET_FAMILY.test(n)) out[n] = s;
  return out;
}
