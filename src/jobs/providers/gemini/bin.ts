import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { DlError } from "../../../errors.ts";

/**
 * Where the `agy` binary is. Looked up on every use until found, so installing it needs no
 * restart; a missing binary is a status the tools explain, never a reason not to start.
 */

export type AgyBinStatus = { ok: true; path: string } | { ok: false; message: string };

const AGY_INSTALL =
  "install the Antigravity CLI (macOS: brew install --cask antigravity-cli) and run `agy` once to sign in, or set DELEGATE_AGY_BIN to its path";

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

export function findAgyBin(bin: string, path: string): AgyBinStatus {
  const found = isAbsolute(bin) ? (executable(bin) ? bin : null) : Bun.which(bin, { PATH: path });
  if (!found) return { ok: false, message: `agy binary not found (DELEGATE_AGY_BIN=${bin}): ${AGY_INSTALL}` };
  try {
    // The real file: its directory is what the jail must show (a symlink's target may live elsewhere).
    return { ok: true, path: realpathSync(found) };
  } catch {
    return { ok: false, message: `agy binary not found (DELEGATE_AGY_BIN=${bin}): ${AGY_INSTALL}` };
  }
}

/** The path, or DlError not_found with what to install. */
export function requireAgyBin(bin: string, path: string): string {
  const s = findAgyBin(bin, path);
  if (s.ok) return s.path;
  throw new DlError("not_found", s.message, { failure_kind: "agy_missing" });
}
