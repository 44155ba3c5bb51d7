import { lstatSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { entryExists, readRegularHead } from "../sys/file-head.ts";
import { foldName } from "../sys/protected-names.ts";
import { writeBack } from "./write-back.ts";

/**
 * Python's shared manifests, `pyproject.toml` and `setup.cfg`, hold two things in one
 * file: the project's own metadata (`[project]`, its dependencies, `[metadata]`,
 * `[options]`), which a delegate edits, and every other tool's configuration (`[tool.*]`
 * tables, `[flake8]`, `[tool:pytest]`, `[mypy]` sections), which pylint, pytest, mypy and
 * flake8 read whenever they run, from a hook or from the editor's extension: pylint's
 * `init-hook` is Python it runs, pytest's `addopts = -p x` loads a module, mypy's
 * `plugins` and flake8's `local-plugins` name files. That part is kept as package.json's
 * tools' keys are (hook-keys.ts): changed, the file is put back whole; in a manifest the
 * job made, the file is moved out.
 *
 * The delegate's part is read conservatively: a region starts only at an unindented
 * header alone on its line that is exactly one of the project's own (`[project]`,
 * `[project.urls]`, `[metadata]`) and ends at the next line any reader may take for a
 * header (a `[` after blanks, controls or invisible characters, on a line as Python's
 * `splitlines` cuts them), so no header a TOML or INI reader sees can fall inside it;
 * everything else, the lines before the first header included, is the tools' part and
 * must stay byte for byte.
 */

/**
 * The project's own tables of each manifest: what packaging and dependency tools read,
 * Poetry's, uv's and PDM's dependency tables among them (not Poetry's `requires-plugins`:
 * plugins Poetry installs and loads).
 */
const OWN_SECTIONS: Readonly<Record<string, RegExp>> = {
  "pyproject.toml":
    /^\[(project(\.[^\]]+)?|build-system|dependency-groups|tool\.poetry\.(dependencies|dev-dependencies|group\.[\w-]+\.dependencies)|tool\.uv\.sources|tool\.pdm\.dev-dependencies)\][ \t]*$/,
  "setup.cfg": /^\[(metadata|options(\.[^\]]+)?|bdist_wheel|sdist|egg_info)\][ \t]*$/,
};
/** Line breaks as Python's str.splitlines knows them: a superset of TOML's, configparser's and pytest's iniconfig's. */
const PY_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
/** A line some reader may take for a header: `[` after blanks, controls or invisible characters. */
const MAY_OPEN = /^[\s\p{Cc}\p{Cf}\p{Z}]*\[/u;
const MAX_BYTES = 1 << 20;

/** Whether a file of this name is a shared manifest (OWN_SECTIONS). */
export const isSectionedManifest = (path: string) => Object.hasOwn(OWN_SECTIONS, foldName(basename(path)));

/** The tools' part of a manifest's text: every line outside the project's own regions, in order. */
export function toolsPart(path: string, text: string): string {
  const own = OWN_SECTIONS[foldName(basename(path))];
  if (!own) return "";
  const out: string[] = [];
  let inOwn = false;
  // Lines as every reader agrees on them (`\n`) open the project's region; a break any of them
  // knows (a lone `\r`, `\f`, `\x1c`) followed by something like a header closes it.
  for (const line of text.split("\n")) {
    const bare = line.replace(/\r$/, "");
    if (bare.split(PY_BREAK).some((l) => MAY_OPEN.test(l))) inOwn = own.test(bare);
    if (!inOwn) out.push(line);
  }
  return out.join("\n");
}

/** Whether the tools' part says anything: a line other than blanks and comments. */
export function hasToolsPart(path: string, text: string): boolean {
  return toolsPart(path, text)
    .split("\n")
    .some((l) => !/^\s*([#;].*)?$/.test(l));
}

/** One manifest before the job: its bytes and mode, and its tools' part (null: too large to read, so any change counts). */
export interface ManifestBefore {
  bytes: Buffer;
  mode: number;
  tools: string | null;
}

/**
 * A manifest's whole text, or null: not a regular file (a link, a folder, gone), or larger
 * than MAX_BYTES by its size on disk (never judged by a head that would hide its end).
 */
export function manifestText(abs: string): string | null {
  try {
    const st = lstatSync(abs);
    if (!st.isFile() || st.size > MAX_BYTES) return null;
  } catch {
    return null;
  }
  const text = readRegularHead(abs, MAX_BYTES + 1);
  return text !== null && Buffer.byteLength(text) <= MAX_BYTES ? text : null;
}

/** The manifest at `abs` before the job, or null when it is no regular file. */
export function readManifest(abs: string): ManifestBefore | null {
  let bytes: Buffer;
  let mode: number;
  try {
    const st = lstatSync(abs);
    if (!st.isFile()) return null;
    bytes = readFileSync(abs);
    mode = st.mode & 0o777;
  } catch {
    return null;
  }
  const text = manifestText(abs);
  return { bytes, mode, tools: text === null ? null : toolsPart(abs, text) };
}

/**
 * Puts a manifest back whole when the job changed its tools' part, or left something else
 * in its place (a link, a folder, a file too large to read); returns whether it did. The
 * job's entry is removed first, never written through. A manifest the job removed stays
 * removed: no tool reads it.
 */
export function restoreManifest(workdir: string, rel: string, before: ManifestBefore): boolean {
  const abs = join(workdir, rel);
  if (!entryExists(abs) || unchanged(abs, before)) return false;
  const text = manifestText(abs);
  if (text !== null && before.tools !== null && toolsPart(abs, text) === before.tools) return false;
  putBackWhole(workdir, rel, before);
  return true;
}

/** Whether the entry at `abs` is the regular file it was, byte for byte. */
export function unchanged(abs: string, before: ManifestBefore): boolean {
  try {
    const st = lstatSync(abs);
    return st.isFile() && st.size === before.bytes.length && readFileSync(abs).equals(before.bytes);
  } catch {
    return false;
  }
}

/**
 * The file as it was, in place of whatever the job left there (removed first, never
 * written through). Refused when a folder above it inside the work tree is now a link:
 * the job could point it at any file of the user's.
 */
export function putBackWhole(workdir: string, rel: string, before: ManifestBefore): void {
  const abs = join(workdir, rel);
  if (!foldersAreReal(workdir, rel)) throw new Error("a folder above it is now a link: not written through it");
  rmSync(abs, { recursive: true, force: true });
  writeBack(abs, before.bytes, before.mode);
}

/** Whether every folder from the work tree down to `rel`'s is a real folder, no link among them. */
export function foldersAreReal(workdir: string, rel: string): boolean {
  try {
    return realpathSync(join(workdir, dirname(rel))) === join(realpathSync(workdir), dirname(rel));
  } catch {
    return false;
  }
}
