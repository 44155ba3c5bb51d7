import { rmSync } from "node:fs";
import { join } from "node:path";
import { entryExists, isRegularFile } from "../sys/file-head.ts";
import { isPackageJson } from "./config-named.ts";
import { type HookKeys, readHookKeys, readsAsManifest, restoreHookKeys } from "./hook-keys.ts";
import {
  foldersAreReal,
  hasToolsPart,
  isSectionedManifest,
  type ManifestBefore,
  manifestText,
  putBackWhole,
  readManifest,
  restoreManifest,
  unchanged,
} from "./manifest-sections.ts";
import { type TreeScan, underIgnored } from "./tree-scan.ts";

/**
 * The tree guard's watch over the project's manifests (tree-guard.ts): a delegate edits
 * their own fields, but what hook managers and other tools read in them (package.json's
 * hook and tools' keys, a Python manifest's tools' part) is read before the job and put
 * back after it; a manifest the job made is looked at the same way.
 */

/** What the manifests said before the job. */
export interface ManifestWatch {
  keys: Map<string, HookKeys>;
  /** Each package.json's bytes, put back whole when the job left something npm reads but dl cannot (a link, a file past what dl parses). */
  originals: Map<string, ManifestBefore>;
  manifests: Map<string, ManifestBefore>;
  /** Per package.json, there or not, the scripts a protected configuration runs: a file the job makes is held to them too. */
  scriptKeys: ReadonlyMap<string, string[]>;
  /** The scripts run across the workspace (`scripts.lint` for `pnpm -r lint`), held in every package.json, a new one too. */
  wideKeys: readonly string[];
}

/** Every manifest of the walk outside ignored folders; `scriptKeys`: per package.json, the scripts a protected configuration runs. */
export function watchManifests(
  workdir: string,
  scan: TreeScan,
  ignored: ReadonlySet<string>,
  scriptKeys: ReadonlyMap<string, string[]>,
  wideScripts: readonly string[] = [],
): ManifestWatch {
  const wideKeys = wideScripts.map((n) => `scripts.${n}`);
  const keys = new Map<string, HookKeys>();
  const originals = new Map<string, ManifestBefore>();
  const manifests = new Map<string, ManifestBefore>();
  for (const [r, e] of scan.entries) {
    if (e.kind !== "file" || underIgnored(r, ignored)) continue;
    const m = isPackageJson(r) || isSectionedManifest(r) ? readManifest(join(workdir, r)) : null;
    if (isPackageJson(r)) keys.set(r, readHookKeys(workdir, r, [...(scriptKeys.get(r) ?? []), ...wideKeys]));
    if (m) (isPackageJson(r) ? originals : manifests).set(r, m);
  }
  return { keys, originals, manifests, scriptKeys, wideKeys };
}

/** Put back what the job changed; each named (`keys`), or why it could not be (`keysLeft`). */
export function restoreManifestParts(
  workdir: string,
  watch: ManifestWatch,
  after: TreeScan | null,
  ignored: ReadonlySet<string>,
): { keys: string[]; keysLeft: string[] } {
  const { keys, keysLeft } = restoreAllHookKeys(workdir, withNewManifests(watch, after, ignored), watch.originals);
  const manifests = restoreManifests(workdir, watch.manifests);
  return { keys: [...keys, ...manifests.keys], keysLeft: [...keysLeft, ...manifests.keysLeft] };
}

/** Python manifests the job made whose tools' part says something (or that are no regular file): moved out as a new protected entry is. */
export function newToolManifests(
  workdir: string,
  before: TreeScan,
  after: TreeScan,
  ignored: ReadonlySet<string>,
): string[] {
  return [...after.entries]
    .filter(([r]) => isSectionedManifest(r) && !before.entries.has(r) && !underIgnored(r, ignored))
    .filter(([r]) => {
      const text = manifestText(join(workdir, r)); // null: no regular file, or too large to judge
      return text === null || hasToolsPart(r, text);
    })
    .map(([r]) => r);
}

/**
 * The hook keys read before the job, and an empty read for each package.json the job made
 * (outside ignored folders): lint-staged finds a new `sub/package.json`'s key, and an
 * editor's Prettier a new `"prettier"` key, as they find an old one's, so what the job put
 * in those keys is taken out again; so are the scripts a protected configuration runs
 * from there (`cd web && npm run lint`, where web/package.json was not).
 */
function withNewManifests(
  watch: ManifestWatch,
  after: TreeScan | null,
  ignored: ReadonlySet<string>,
): Map<string, HookKeys> {
  const out = new Map(watch.keys);
  for (const [r, e] of after?.entries ?? []) {
    if (e.kind !== "file" || !isPackageJson(r) || out.has(r) || underIgnored(r, ignored)) continue;
    out.set(r, new Map([...(watch.scriptKeys.get(r) ?? []), ...watch.wideKeys].map((k) => [k, undefined])));
  }
  return out;
}

/** Each manifest whose tools' part the job changed, put back whole (`<file>#tools' part`), as the hook keys are. */
function restoreManifests(workdir: string, manifests: Map<string, ManifestBefore>) {
  const keys: string[] = [];
  const keysLeft: string[] = [];
  for (const [r, m] of manifests) {
    try {
      if (restoreManifest(workdir, r, m)) keys.push(`${r}#tools' part`);
    } catch (e) {
      keysLeft.push(`${r} (could not be put back: ${e instanceof Error ? e.message.slice(0, 200) : String(e)})`);
    }
  }
  return { keys, keysLeft };
}

/** Every package.json's hook keys put back; one that cannot be written is named, the others still restored. */
function restoreAllHookKeys(
  workdir: string,
  all: Map<string, HookKeys>,
  originals: Map<string, ManifestBefore>,
): { keys: string[]; keysLeft: string[] } {
  const keys: string[] = [];
  const keysLeft: string[] = [];
  for (const [r, k] of all) {
    try {
      keys.push(...restorePackageJson(workdir, r, k, originals.get(r)));
    } catch (e) {
      keysLeft.push(
        `${r} (its scripts could not be restored: ${e instanceof Error ? e.message.slice(0, 200) : String(e)})`,
      );
    }
  }
  return { keys, keysLeft };
}

/**
 * One package.json's hook and tools' keys put back. What dl cannot read keys from (a link,
 * a folder, a file past what it parses, not an object) is put back whole, or removed when
 * the job made it; nothing is written through a folder the job turned into a link.
 */
function restorePackageJson(workdir: string, r: string, keys: HookKeys, original?: ManifestBefore): string[] {
  const abs = join(workdir, r);
  if (!entryExists(abs) || (original && unchanged(abs, original))) return [];
  if (!foldersAreReal(workdir, r)) throw new Error("a folder above it is now a link: not written through it");
  if (isRegularFile(abs) && readsAsManifest(abs)) return restoreHookKeys(workdir, r, keys, original?.mode);
  if (original) putBackWhole(workdir, r, original);
  else rmSync(abs, { recursive: true, force: true });
  return [`${r}#whole file`];
}
