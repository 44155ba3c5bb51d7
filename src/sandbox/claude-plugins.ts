import { basename, dirname, isAbsolute, resolve } from "node:path";

/**
 * The plugin folders Claude Code loads from the work tree. A project's settings may declare
 * a marketplace that is a folder (or a marketplace.json file) of the repository
 * (`extraKnownMarketplaces.<name>.source = {source: "directory", path: "./tools/market"}`),
 * and that marketplace's `.claude-plugin/marketplace.json` names each plugin by a relative
 * folder (`plugins[].source = "./plugins/fmt"`, under `metadata.pluginRoot` when set). Once
 * the user installed such a plugin, Claude Code copies the folder afresh at every session
 * (measured with the real CLI: a SessionStart hook rewritten in the repository's plugin ran
 * at the next `claude -p`, before any API call) and runs what it holds without asking again:
 * `hooks/hooks.json`, `.mcp.json`, commands, agents, skills, output styles and the scripts
 * they name. So a marketplace folder the project's settings declare, and each plugin folder
 * a marketplace.json names (the marketplace's root itself for `"source": "./"`), are Claude
 * Code's configuration, read-only like `.claude/` (config-named.ts takes them as named folders).
 *
 * One reader per file: a Claude Code settings file, and a marketplace.json. Anything else,
 * or text that is not JSON, names no plugin folder.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function parse(text: string): Json | null {
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : null;
  } catch {
    return null; // Claude Code reads nothing from it either
  }
}

const SETTINGS = /(^|\/)\.claude\/settings(\.local)?\.json$/i;
const MARKETPLACE = /(^|\/)\.claude-plugin\/marketplace\.json$/i;

/** A marketplace source's folder: `directory` names it, `file` names its marketplace.json (in `.claude-plugin/` or not). */
function marketplaceDir(source: Json, project: string): string | null {
  const path = source.path;
  if (typeof path !== "string" || path === "") return null;
  const abs = isAbsolute(path) ? resolve(path) : resolve(project, path);
  if (source.source === "directory") return abs;
  if (source.source !== "file") return null;
  const dir = dirname(abs);
  return basename(dir) === ".claude-plugin" ? dirname(dir) : dir;
}

/** The marketplace folders a settings file declares (relative paths: from the project, where Claude Code runs). */
function fromSettings(settings: Json, project: string): string[] {
  const known = settings.extraKnownMarketplaces;
  if (!isObject(known)) return [];
  return Object.values(known).flatMap((m) => {
    const dir = isObject(m) && isObject(m.source) ? marketplaceDir(m.source, project) : null;
    return dir ? [dir] : [];
  });
}

/** The plugin folders a marketplace.json names: relative sources, from the marketplace root (or its pluginRoot). */
function fromMarketplace(market: Json, file: string): string[] {
  const root = dirname(dirname(file));
  const meta = isObject(market.metadata) ? market.metadata : {};
  const base = typeof meta.pluginRoot === "string" ? resolve(root, meta.pluginRoot) : root;
  const plugins = Array.isArray(market.plugins) ? market.plugins : [];
  return plugins.flatMap((p) => {
    const src = isObject(p) ? p.source : undefined;
    // A bare name is under pluginRoot; `./x` is from the marketplace root; a git or npm source is not the tree's.
    if (typeof src !== "string" || src === "" || src.includes("://")) return [];
    return [src.startsWith("./") || src.startsWith("../") ? resolve(root, src) : resolve(base, src)];
  });
}

/** The folders `file` (with its `text`) makes Claude Code load as plugins or marketplaces. */
export function claudePluginDirs(file: string, text: string): string[] {
  const isSettings = SETTINGS.test(file);
  if (!isSettings && !MARKETPLACE.test(file)) return [];
  const json = parse(text);
  if (!json) return [];
  // Claude Code resolves a settings file's relative paths from the project: the folder holding its `.claude/`.
  if (isSettings) return fromSettings(json, dirname(dirname(file)));
  return fromMarketplace(json, file);
}
