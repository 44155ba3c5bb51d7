/**
 * The names a delegate may never write, because a program on the host reads them and
 * obeys or runs what they say without asking the user again: git's own metadata, the
 * configs of the hook managers a commit runs, and the project configuration that Claude
 * Code, editors and shell tools load on their own. One table, read by the jail (bound
 * read-only, denied in the macOS profile), by the check after every jailed run (a new
 * entry of these names fails it), and by the agent's write tools (refused).
 *
 * A rule matches a path inside the workdir when one of its components has the rule's
 * name (a folder of that name protects everything below it), or, for `under` rules, when
 * that name sits directly in the named folder (`.github/copilot-instructions.md`). Names
 * are compared folded: lower case and without the code points macOS's file systems
 * ignore, so `.GIT`, `.Claude` and `.g\u200cit` are what they are on a Mac.
 */

export interface ProtectRule {
  /** Short id, named in every refusal (`path_refused` … rule `git-metadata`). */
  id: string;
  /** What the rule keeps, for a person: "git metadata", "Claude Code's project configuration". */
  what: string;
  /** Folded names (or patterns) this rule protects. */
  names: RegExp;
  /** Only inside a folder of this (folded) name, e.g. `.github`. */
  under?: string;
  /**
   * The project's own entries only, never one below a `node_modules` folder: the tools read
   * the project's configuration and skip installed packages' (ESLint's and Prettier's
   * defaults ignore node_modules), and `npm install` writes packages' own `.eslintrc`s.
   */
  projectOnly?: true;
}

/**
 * Each entry names what reads it. Hook managers: the hook a user installed runs what
 * these files say at the next commit. Tool configuration: loaded by the host tool when
 * it opens the folder (or a file in it) and obeyed, running commands, MCP servers,
 * tasks, or steering the model that drives the host.
 */
export const PROTECT_RULES: readonly ProtectRule[] = [
  {
    id: "git-metadata",
    // .lfsconfig: git-lfs reads it at every git command that runs its filter (where to send objects, with the user's credentials).
    what: "git metadata (a .git folder or gitfile, .gitmodules, .lfsconfig)",
    names: /^(\.git(modules)?|\.lfsconfig)$/,
  },
  {
    id: "hook-manager",
    what: "a git hook manager's configuration (run at the next commit)",
    names:
      /^(\.husky|\.githooks|\.git-hooks|\.hooks|\.lefthook|\.lefthook-local|\.pre-commit-config\.ya?ml|prek\.toml|\.overcommit\.ya?ml|\.?lefthook(-local)?\.(ya?ml|json|jsonc|toml)|\.lintstagedrc(\..*)?|lint-staged\.config\..*|\.?simple-git-hooks(\..*)?|commitlint\.config\..*|\.commitlintrc(\..*)?|hk(\.local)?\.pkl)$/,
  },
  {
    id: "hook-manager",
    what: "a git hook manager's configuration (run at the next commit)",
    names: /^\.?lefthook(-local)?\.(ya?ml|json|jsonc|toml)$/,
    under: ".config",
  },
  {
    id: "claude-code",
    what: "Claude Code's project configuration (settings and hooks, agents, commands, skills, MCP servers, memory, the files it copies into new worktrees)",
    names: /^(\.claude|\.claude-plugin|\.mcp\.json|\.worktreeinclude|claude\.md|claude\.local\.md)$/,
  },
  {
    id: "agent-config",
    what: "another coding agent's project configuration (Codex, Gemini, Cursor, Copilot and the like)",
    names:
      /^(\.codex|\.gemini|\.cursor|\.cursorrules|\.windsurf|\.windsurfrules|\.clinerules|\.roo|\.roomodes|\.continue|\.continuerules|\.kiro|\.junie|\.opencode|opencode\.jsonc?|\.agent|\.agents|\.amazonq|\.kilocode|\.augment|\.augment-guidelines|\.trae|\.qwen|qwen\.md|\.crush|\.?crush\.json|crush\.md|warp\.md|\.goosehints|\.rules|\.aider\.conf\.ya?ml|\.aider\.model\.(settings\.ya?ml|metadata\.json)|agents?\.md|agents\.override\.md|gemini\.md)$/,
  },
  {
    id: "agent-config",
    what: "another coding agent's project configuration (Codex, Gemini, Cursor, Copilot and the like)",
    names: /^(copilot-instructions\.md|instructions|prompts|agents|chatmodes|hooks)$/,
    under: ".github",
  },
  {
    id: "editor-config",
    what: "an editor's project configuration (tasks, run configurations, settings, dev containers)",
    names:
      /^(\.vscode|\.idea|\.run|\.zed|\.fleet|\.vs|\.helix|\.nova|\.theia|\.devcontainer|\.devcontainer\.json|.*\.code-workspace|.*\.sublime-project|\.dir-locals(-2)?\.el|\.exrc|\.vimrc|\.gvimrc|\.nvimrc|\.nvim\.lua|\.lvimrc)$/,
  },
  // mise reads, in every folder from the cwd up (src/config/mod.rs LOCAL_CONFIG_FILENAMES and
  // its MISE_ENV patterns): .tool-versions (asdf's too: a `path:` version puts a folder on
  // PATH), [.]mise[.<env>][.local].toml, .mise/, .rtx[.local].toml, .miserc.toml (picks
  // MISE_ENV), .config/{mise/,mise[.<env>].toml,miserc.toml} and mise/{config*.toml,conf.d}.
  {
    id: "shell-env",
    what: "a shell environment loader's configuration (direnv, mise, asdf, zsh-autoenv)",
    names:
      /^(\.envrc|\.mise|\.?mise(\.[^/]+)?\.toml|\.rtx(\.[^/]+)?\.toml|\.miserc\.toml|\.tool-versions|\.autoenv(_leave)?\.zsh)$/,
  },
  {
    id: "shell-env",
    what: "a shell environment loader's configuration (direnv, mise)",
    names: /^(mise|direnv|mise(\.[^/]+)?\.toml|miserc\.toml)$/,
    under: ".config",
  },
  {
    id: "shell-env",
    what: "a shell environment loader's configuration (mise)",
    names: /^(config(\.[^/]+)?\.toml|conf\.d)$/,
    under: "mise",
  },
  // A JavaScript tool loads its configuration as a module it runs, or obeys the plugins and
  // parsers a JSON or YAML one names by path: ESLint's, Prettier's, Stylelint's, Tailwind's
  // and the test runners' editor extensions load it as soon as a file of the folder opens
  // (ESLint 10 from the linted file's own folder up), and the tools a hook runs load it at
  // the commit. The names are the convention those tools share (cosmiconfig's and
  // lilconfig's search places, ESLint's and Vite's own): `<tool>.config.<ext>` and
  // `.<tool>rc[.<ext>]` anywhere, `<tool>rc[.<ext>]` in `.config/`; Python's `.pylintrc`
  // and `.coveragerc` (their `load-plugins`, `plugins`) follow it too, and the Python tools'
  // own files beside it: `[.]pylintrc[.toml]` (its `init-hook` is Python pylint runs),
  // `[.]mypy.ini` (`plugins`), `.flake8` (`local-plugins`), `[.]pytest.{ini,toml}` (`addopts =
  // -p x`), `tox.{ini,toml}` (the same sections of pyproject.toml and setup.cfg:
  // manifest-sections.ts). Vitest's `vitest.workspace.ts` is read as its config is. The
  // manifests other than package.json that the same loaders read as one (`package.yaml` and
  // `package.yml`: lint-staged's and prettier's search places, pnpm's too; pnpm's
  // `package.json5`), and the runtimes' own configuration: bun's `bunfig.toml` (`preload`
  // runs code before every `bun run` and `bun test`), deno's `deno.json[c]` (tasks, import maps).
  // Last: the names above that also fit this pattern (.envrc, .miserc.toml) keep their own rule.
  // A build tool's own settings, which it reads from the folder it runs in and each folder
  // above before any of the project's code, and which name programs it runs: cargo's
  // `.cargo/config[.toml]` (alias, build.rustc-wrapper, target.*.runner, linker), rustup's
  // `rust-toolchain[.toml]` (toolchain.path: every proxy, cargo and rustc, runs from there),
  // maven's `.mvn/` (jvm.config and maven.config are its command line, extensions.xml loads
  // code, wrapper/ is the launcher), gradle's `gradle.properties` (org.gradle.jvmargs) and
  // its wrapper's jar and properties (the distribution ./gradlew runs), MSBuild's
  // `Directory.Build.*` and `Directory.Packages.props` (imported into every project: tasks
  // run at build), `global.json` (the SDK), NuGet's `nuget.config`, `.config/dotnet-tools.json`,
  // bundler's `.bundle/` (BUNDLE_GEMFILE), uv's `uv.toml` and `.python-version` (a path there
  // is the interpreter uv runs). A hook, a task or an editor (rust-analyzer runs `cargo
  // metadata` at folder open) runs the tool; the tool obeys these.
  {
    id: "toolchain-config",
    projectOnly: true,
    what: "a build tool's own settings, read from the folder it runs in and every folder above (.cargo/config.toml, rust-toolchain.toml, .mvn/, gradle.properties, Directory.Build.props, uv.toml: they name programs it runs)",
    names:
      /^(rust-toolchain(\.toml)?|\.mvn|gradle\.properties|gradle-wrapper\.(properties|jar)|directory\.(build|packages|solution)\.(props|targets|rsp)|global\.json|nuget\.config|\.bundle|uv\.toml|\.python-versions?)$/,
  },
  {
    id: "toolchain-config",
    projectOnly: true,
    what: "cargo's own settings (.cargo/config.toml: aliases, rustc-wrapper, runners and linkers it runs)",
    names: /^config(\.toml)?$/,
    under: ".cargo",
  },
  {
    id: "toolchain-config",
    projectOnly: true,
    what: "the .NET tools' manifest (.config/dotnet-tools.json: the tools `dotnet tool run` runs)",
    names: /^dotnet-tools\.json$/,
    under: ".config",
  },
  {
    id: "tool-config",
    projectOnly: true,
    what: "a tool's configuration that is code or names code (eslint.config.js, .prettierrc, vite.config.ts: loaded by editors' extensions and by the tools a hook runs)",
    names:
      /^([^/]+\.(config|workspace)\.((c|m)?(j|t)sx?|json5?|jsonc|ya?ml|toml)|\.[^/.]+rc(\.((c|m)?(j|t)sx?|json5?|jsonc|ya?ml|toml))?|\.?mypy\.ini|\.flake8|\.?pytest\.(ini|toml)|\.?pylintrc(\.toml)?|tox\.(ini|toml)|package\.(ya?ml|json5)|\.?bunfig\.toml|deno\.jsonc?)$/,
  },
  {
    id: "tool-config",
    projectOnly: true,
    what: "a tool's configuration that is code or names code (.config/prettierrc.js: loaded by editors' extensions and by the tools a hook runs)",
    names: /^[^/.]+rc(\.((c|m)?(j|t)sx?|json5?|jsonc|ya?ml|toml))?$/,
    under: ".config",
  },
];

/** Code points HFS+ and APFS drop when they compare names (git's own list). */
const IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** A name as macOS compares it: composed, lower case, without ignorable code points or trailing dots and spaces. */
export function foldName(name: string): string {
  return name
    .normalize("NFC")
    .replace(IGNORABLE, "")
    .toLowerCase()
    .replace(/[. ]+$/, "");
}

/**
 * Entry names of a folder git takes for a git dir (setup.c's is_git_directory): HEAD, and
 * objects/ and refs/ either beside it or in the folder a `commondir` file names (a linked
 * worktree's admin folder has only HEAD and commondir). Folded, as macOS compares them.
 */
export function looksLikeGitDir(names: Iterable<string>): boolean {
  const n = new Set([...names].map(foldName));
  return n.has("head") && (n.has("commondir") || (n.has("objects") && n.has("refs")));
}

/** `.git` in every spelling a case-insensitive or Unicode-folding file system accepts. */
export function isDotGit(name: string): boolean {
  return foldName(name) === ".git";
}

/**
 * A folder of installed packages: below it, `projectOnly` rules do not apply. Exactly that
 * name: a folded one (`Node_Modules`) is no folder node or the tools skip, so no rule is
 * lifted below it (the macOS profile matches it exactly too).
 */
export const isPackagesFolder = (name: string) => name === "node_modules";
/** Whether a path (absolute or relative) has a `node_modules` folder among its components. */
export const inPackagesFolder = (path: string) => path.split("/").some(isPackagesFolder);

/** The rule one path component matches, given the name of its parent folder and whether a `node_modules` folder holds it. */
export function ruleForName(name: string, parent: string | null, inPackages = false): ProtectRule | null {
  const folded = foldName(name);
  for (const r of PROTECT_RULES) {
    if (r.under !== undefined && (parent === null || foldName(parent) !== r.under)) continue;
    if (r.projectOnly && inPackages) continue;
    if (r.names.test(folded)) return r;
  }
  return null;
}

/**
 * The rule a link stands for when its name is a folder some rule protects names under
 * (`.cargo`, `.config`, `.github`, `mise`): the tools open `.cargo/config.toml` through
 * the kernel, which follows the link, so a link `.cargo` → `cfg` makes `cfg/config.toml`
 * cargo's settings, and no name inside the folder it leads to says so.
 */
export function ruleForLinkedFolder(name: string, inPackages = false): ProtectRule | null {
  const folded = foldName(name);
  return PROTECT_RULES.find((r) => r.under === folded && !(r.projectOnly && inPackages)) ?? null;
}

/**
 * The rule that covers a path relative to the workdir (`a/b/.claude/x`), or null. Every
 * component counts: a file anywhere below a protected folder is protected.
 */
export function ruleForPath(rel: string): { rule: ProtectRule; at: string } | null {
  const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
  for (let i = 0; i < parts.length; i++) {
    const rule = ruleForName(parts[i]!, i > 0 ? parts[i - 1]! : null, parts.slice(0, i).some(isPackagesFolder));
    if (rule) return { rule, at: parts.slice(0, i + 1).join("/") };
  }
  return null;
}
