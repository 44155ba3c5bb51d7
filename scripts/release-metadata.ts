/**
 * The files outside package.json that name dl's version: server.json (the MCP Registry's
 * entry and its npm package), the plugin's plugin.json and the marketplace listing it.
 * Every "version" in them is dl's version. `npm run release` writes package.json's version
 * into each (editing the text, so the files keep their layout), and
 * test/release/metadata.test.ts fails when one differs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const VERSIONED_FILES = ["server.json", "plugin/.claude-plugin/plugin.json", ".claude-plugin/marketplace.json"];

const VERSION_FIELD = /("version"\s*:\s*")([^"]*)(")/g;

/** Each "version" value in each file, as `file: value` pairs in file order. */
export function versionsIn(root: string): { file: string; version: string }[] {
  return VERSIONED_FILES.flatMap((file) =>
    [...readFileSync(join(root, file), "utf8").matchAll(VERSION_FIELD)].map((m) => ({ file, version: m[2] ?? "" })),
  );
}

/** Set every "version" in the files to `version`; returns the files it changed. */
export function syncVersions(root: string, version: string): string[] {
  const changed: string[] = [];
  for (const file of VERSIONED_FILES) {
    const path = join(root, file);
    const text = readFileSync(path, "utf8");
    const next = text.replace(
      VERSION_FIELD,
      (_m, head: string, _v: string, tail: string) => `${head}${version}${tail}`,
    );
    if (next === text) continue;
    writeFileSync(path, next);
    changed.push(file);
  }
  return changed;
}
