import { canonicalPath } from "./paths.ts";

/**
 * What dl itself reads from disk later as instructions, configuration or a program: the
 * agent definitions of the global tier (DELEGATE_LOCAL_AGENTS_DIR; the two project tiers
 * are `.claude/`, a protect rule), the settings file, the prices and dsh models files,
 * CODEX_HOME (the Codex CLI's config.toml and AGENTS.md), and the CLIs dl starts when
 * their setting is a path. Wherever the user's settings put one of them inside a workdir,
 * a delegate that rewrites it steers the next delegation (`coder.md` granted Bash with a
 * hostile prompt) or replaces the program dl runs: so each is read-only in the jail
 * (tree-guard.ts) and refused to the write tools (protect-write.ts), from this one list.
 */

export interface DlRead {
  /** Canonical absolute path. */
  path: string;
  kind: "dir" | "file";
  /** The setting that places it, for a refusal's text. */
  setting: string;
  /** Who reads it, when not dl itself (the user's Claude Code: claude-home-reads.ts). */
  reader?: string;
  /** Claude Code's configuration folder (CLAUDE_CONFIG_DIR, else ~/.claude): where the host's own readers look (claudeDirOf). */
  claudeConfig?: true;
}

/** The parts of Config this reads (Config satisfies it). */
export interface DlReadInputs {
  paths: { agentsDir: string; codexHome: string; dshModelsFile: string; claudeConfigDir: string };
  settings: { file: string };
  usage: { pricesFile?: string };
  codex: { bin: string };
  gemini: { bin: string };
  dsh: { launcher: string };
  callerDir: string;
}

/**
 * The folders of dlReads: a workdir that is one of them, or lies inside one, would have
 * every file it edits read back by dl as instructions, so sys/workdir-guard.ts refuses it.
 */
export function dlReadDirs(paths: { agentsDir: string; codexHome: string }, callerDir?: string): DlRead[] {
  return [
    { path: canonicalPath(paths.agentsDir, callerDir), kind: "dir", setting: "DELEGATE_LOCAL_AGENTS_DIR" },
    { path: canonicalPath(paths.codexHome, callerDir), kind: "dir", setting: "CODEX_HOME" },
  ];
}

export function dlReads(c: DlReadInputs): DlRead[] {
  const at = (p: string) => canonicalPath(p, c.callerDir);
  const out: DlRead[] = [
    ...dlReadDirs(c.paths, c.callerDir),
    { path: at(c.settings.file), kind: "file", setting: "the settings file" },
    { path: at(c.paths.dshModelsFile), kind: "file", setting: "DELEGATE_DSH_MODELS_FILE" },
    {
      path: at(c.paths.claudeConfigDir),
      kind: "dir",
      setting: "CLAUDE_CONFIG_DIR",
      reader: "Claude Code",
      claudeConfig: true,
    },
  ];
  if (c.usage.pricesFile) out.push({ path: at(c.usage.pricesFile), kind: "file", setting: "DELEGATE_PRICES_FILE" });
  // A bare name is looked up on PATH; a path is the very file dl runs.
  for (const [bin, setting] of [
    [c.codex.bin, "DELEGATE_CODEX_BIN"],
    [c.gemini.bin, "DELEGATE_AGY_BIN"],
    [c.dsh.launcher, "DELEGATE_DSH_LAUNCHER"],
  ] as const)
    if (bin.includes("/")) out.push({ path: at(bin), kind: "file", setting });
  return out;
}
