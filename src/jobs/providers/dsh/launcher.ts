import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { DlError } from "../../../errors.ts";

/** The launcher as found now: its path, or what to do about it. */
export type DshLauncherStatus = { ok: true; path: string } | { ok: false; message: string };

/**
 * Finds DELEGATE_DSH_LAUNCHER: an absolute path, or a name on the child PATH (the PATH
 * the launcher will itself run with). Never throws: a missing launcher is a status the
 * server reports and the dsh tools refuse with, not a reason for the server to stop.
 */
export function findDshLauncher(launcher: string, env: Readonly<Record<string, string>>): DshLauncherStatus {
  const path = isAbsolute(launcher) ? launcher : Bun.which(launcher, { PATH: env.PATH ?? "" });
  const fix = `install the DeepSeek-harness launcher (dsh-herdr.sh) on PATH or set DELEGATE_DSH_LAUNCHER to its absolute path`;
  if (!path) return { ok: false, message: `the dsh launcher (${launcher}) was not found on PATH; ${fix}` };
  try {
    if (!statSync(path).isFile()) throw new Error("not a file");
    accessSync(path, constants.X_OK);
  } catch {
    return { ok: false, message: `the dsh launcher ${path} is missing or not executable; ${fix}` };
  }
  return { ok: true, path };
}

/** The launcher's path, or DlError "not_found" saying what to install or set. */
export function requireDshLauncher(launcher: string, env: Readonly<Record<string, string>>): string {
  const s = findDshLauncher(launcher, env);
  if (!s.ok) throw new DlError("not_found", `${s.message} (nothing was started)`);
  return s.path;
}
