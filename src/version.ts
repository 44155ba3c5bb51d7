/**
 * What this binary is: replaced at build time by build.ts (`define`). Run from source,
 * dl reports a dev version, an unknown commit and the target "source".
 */
declare const DL_VERSION: string | undefined;
declare const DL_COMMIT: string | undefined;
declare const DL_TARGET: string | undefined;

export const VERSION: string = typeof DL_VERSION === "string" ? DL_VERSION : "0.0.0-dev";

/** The version, the git commit it was built from and the release target (e.g. linux-arm64-musl). */
export type BuildInfo = { version: string; commit: string; target: string };

export const BUILD: BuildInfo = Object.freeze({
  version: VERSION,
  commit: typeof DL_COMMIT === "string" ? DL_COMMIT : "unknown",
  target: typeof DL_TARGET === "string" ? DL_TARGET : "source",
});

/** `dl --version` as one line: `dl 0.1.0 (commit 1a2b3c4d5e6f, linux-x64)`. */
export function versionLine(b: BuildInfo = BUILD): string {
  return `dl ${b.version} (commit ${b.commit}, ${b.target})`;
}
