import { lstatSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { readRegularHead } from "../sys/file-head.ts";

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
 * header that is exactly one of the project's own (`[project]`, `[project.urls]`,
 * `[metadata]`) and ends at the next line that starts with `[` after any blanks, so no
 * header a TOML or INI reader sees can fall inside it; everything else, the lines before
 * the first header included, is the tools' part and must stay byte for byte.
 */

/** The project's own tables of each manifest: what packaging and dependency tools read. */
const OWN_SECTIONS: Readonly<Record<string, RegExp>> = {
  "pyproject.toml": /^\[(project(\.[^\]]+)?|build-system|dependency-groups)\]\s*$/,
  "setup.cfg": /^\[(metadata|options(\.[^\]]+)?|bdist_wheel|sdist|egg_info)\]\s*$/,
};
const MAX_BYTES = 1 << 20;

/** Whether a file of this name is a shared manifest (OWN_SECTIONS). */
export const isSectionedManifest = (path: string) => Object.hasOwn(OWN_SECTIONS, basename(path));

/** The tools' part of a manifest's text: every line outside the project's own regions, in order. */
export function toolsPart(path: string, text: string): string {
  const own = OWN_SECTIONS[basename(path)];
  if (!own) return "";
  const out: string[] = [];
  let inOwn = false;
  for (const line of text.split("\n")) {
    if (/^\s*\[/.test(line)) inOwn = own.test(line);
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
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(abs);
  } catch {
    return false;
  }
  if (st.isFile() && st.size === before.bytes.length && readFileSync(abs).equals(before.bytes)) return false;
  const text = manifestText(abs);
  if (text !== null && before.tools !== null && toolsPart(abs, text) === before.tools) return false;
  rmSync(abs, { recursive: true, force: true });
  writeFileSync(abs, before.bytes, { flag: "wx", mode: before.mode });
  return true;
}
