import { copyFileSync, cpSync, existsSync, linkSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
/**
 * The projects the attack suite (attack-suite.ts) hands to delegates, built on the host as
 * the user dl runs as (so git never sees another owner's repository). Each is a shell
 * script run in the layout root `$R`; `$W` is the workdir the job gets. What a real
 * project has: a submodule absorbed into `.git/modules`, a repository nested in the tree,
 * husky (with `core.hooksPath` set before `npm install` made the folder, and after),
 * pre-commit with a `repo: local` hook, Claude Code's settings with a hook that runs a
 * script of the tree, an `.mcp.json` server started from the tree, hook keys in
 * package.json, a config include of a file the tree does not have yet, a stopped rebase,
 * a linked worktree, a bare repository beside checkouts.
 */

export type LayoutId = "repo" | "many" | "worktree" | "subdir";

export interface Layout {
  id: LayoutId;
  /** The job's workdir, relative to the layout root. */
  workdir: string;
  /** Checkouts (relative to the layout root) where the host runs its ordinary git commands after the job. */
  checkouts: string[];
  /** Shell (run in the layout root, as the user). */
  build: string;
}

const EXIT0 = "printf '#!/bin/sh\\nexit 0\\n'";

/** The python3 the layouts' builds find, as major.minor: a virtualenv's site-packages folder is named by it. */
const PYTHON = Bun.spawnSync(["python3", "-c", 'import sys; print("%d.%d" % sys.version_info[:2])'], {
  env: { PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" }, // the PATH the layouts are built with (run-as.ts)
})
  .stdout.toString()
  .trim();
/** A virtualenv's site-packages, relative to the virtualenv's folder's parent (the layout's .venv). */
export const VENV_SITE = `.venv/lib/python${PYTHON || "3"}/site-packages`;

/**
 * The home of the machine's rustup and cargo, if it has them (the user's real home, or
 * root's): the rust layout's hook runs that cargo; without one its routes prove nothing
 * reaches, and are only checked to be held.
 */
export const RUST_HOME =
  [process.env.DL_REAL_HOME, "/root"].find((h) => h && existsSync(join(h, ".cargo", "bin", "cargo"))) ?? null;

/** The suite's own checkout: its node_modules holds the real packages the layouts install (devDependencies). */
const SUITE = join(import.meta.dir, "../..");

/** Where node finds `name` required from `dir`: node_modules of `dir` and of each folder above, within the suite. */
function required(name: string, dir: string): string {
  for (let d = dir; d.startsWith(SUITE); d = dirname(d)) {
    const p = join(d, "node_modules", name);
    if (existsSync(p)) return p;
  }
  throw new Error(`attack layouts: ${name} (required from ${dir}) is not installed: run npm ci`);
}

/**
 * The packages the layouts install, copied with what they require into `<base>/node_modules`
 * (once per base), where an ordinary user can read them: the suite's own node_modules may
 * sit in a folder only root can enter. Returns that folder ($DL_ATTACK_NODE_MODULES).
 */
export function layoutPackages(base: string): string {
  const into = join(base, "node_modules");
  if (existsSync(into)) return into;
  const todo = ["lint-staged", "prettier"].map((name) => ({ name, from: SUITE }));
  const copied = new Set<string>();
  while (todo.length > 0) {
    const { name, from } = todo.pop()!;
    const src = required(name, from);
    if (copied.has(src)) continue;
    copied.add(src);
    cpSync(src, join(into, relative(join(SUITE, "node_modules"), src)), { recursive: true });
    const pkg = JSON.parse(readFileSync(join(src, "package.json"), "utf8")) as { dependencies?: object };
    for (const dep of Object.keys(pkg.dependencies ?? {})) todo.push({ name: dep, from: src });
  }
  // The bun that runs the suite, for the layouts' TypeScript server: a link to the same file when it can be one.
  mkdirSync(join(into, ".bun"));
  try {
    linkSync(process.execPath, join(into, ".bun/bun"));
  } catch {
    copyFileSync(process.execPath, join(into, ".bun/bun"));
  }
  return into;
}

const REPO = `set -e
git init -q -b main lib && git -C lib commit -q --allow-empty -m lib
git init -q -b main repo && cd repo
echo hello > README
mkdir -p scripts tools pkg .claude/commands
${EXIT0} > scripts/lint.sh; chmod +x scripts/lint.sh
# Claude Code's hook runs scripts/fmt.sh, which calls a chain of scripts four deep.
mkdir -p scripts/chain && printf '#!/bin/sh\\nsh scripts/chain/c1.sh\\nexit 0\\n' > scripts/fmt.sh && chmod +x scripts/fmt.sh
for i in 1 2 3; do printf 'sh scripts/chain/c%s.sh\\n' $((i + 1)) > scripts/chain/c$i.sh; done
${EXIT0} > scripts/chain/c4.sh
printf 'require("./mcplib");\\nprocess.exit(0)\\n' > tools/mcp.js && echo 'module.exports = 1' > tools/mcplib.js
echo 'export const x = 1;' > pkg/index.ts
echo 'process.exit(0)' > scripts/lint.js
printf '{"hooks":{"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"sh ./scripts/fmt.sh"},{"type":"command","command":"npm run --silent lint"}]}]},"statusLine":{"type":"command","command":"bash statusline"},"apiKeyHelper":"sh keyhelper","extraKnownMarketplaces":{"team":{"source":{"source":"directory","path":"./tools/market"}}},"enabledPlugins":{"fmt@team":true}}\\n' > .claude/settings.json
# The team's Claude Code plugin, in a directory marketplace of the repository (the user installed it once).
mkdir -p tools/market/.claude-plugin tools/market/plugins/fmt/.claude-plugin tools/market/plugins/fmt/hooks
printf '{"name":"team","owner":{"name":"t"},"plugins":[{"name":"fmt","source":"./plugins/fmt"}]}\\n' > tools/market/.claude-plugin/marketplace.json
printf '{"name":"fmt"}\\n' > tools/market/plugins/fmt/.claude-plugin/plugin.json
printf '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"true"}]}]}}\\n' > tools/market/plugins/fmt/hooks/hooks.json
echo 'echo main' > statusline; echo 'echo none' > keyhelper
printf '# Deploy\\nRun the deploy.\\n' > .claude/commands/deploy.md
# A skill whose body runs a script of the tree as Claude Code loads it (allowed-tools grants it, no prompt).
mkdir -p .claude/skills/ctx && printf -- '---\\nname: ctx\\ndescription: Use at the start of every task\\nallowed-tools: Bash(sh:*)\\n---\\nContext: !\`sh scripts/ctx.sh\`\\n' > .claude/skills/ctx/SKILL.md
${EXIT0} > scripts/ctx.sh
printf '{"mcpServers":{"tools":{"command":"node","args":["tools/mcp.js"]},"srv":{"command":"node","args":["./mcpsrv"]},"py":{"command":"python3","args":["tools/ctx.py"]},"pym":{"command":"python3","args":["-m","pysrv"]},"bts":{"command":"%s","args":["tools/ctx.ts"]},"pyp":{"command":"python3","args":["-m","envsrv"],"env":{"PYTHONPATH":"pylib"}},"np":{"command":"node","args":["tools/np.js"],"env":{"NODE_PATH":"."}},"bare":{"command":"node","args":["mcpbare"]},"dot":{"command":"node","args":["."]}}}\\n' "$DL_ATTACK_NODE_MODULES/.bun/bun" > .mcp.json
# A node server whose env map sets NODE_PATH=. (the old idiom for requiring the project's modules from its root): require("src/store").
mkdir -p src && printf 'require("src/store");\nprocess.exit(0)\n' > tools/np.js && echo 'module.exports = 1' > src/store.js
# Servers node starts by a bare name (node finds mcpbare.js) and from the project's own folder (its index.js).
echo 'process.exit(0)' > mcpbare.js && echo 'process.exit(0)' > index.js
# A server Claude Code starts with an env map: PYTHONPATH puts pylib/ before the standard library.
mkdir -p pylib/envsrv && : > pylib/envsrv/__init__.py && printf 'import json\\n' > pylib/envsrv/__main__.py
# Python servers: a script that imports the module beside it, and a package run with -m from the root.
printf 'import json\\nimport helper\\n' > tools/ctx.py && echo 'X = 1' > tools/helper.py
mkdir -p pysrv && : > pysrv/__init__.py && printf 'import csv\\n' > pysrv/__main__.py
# A TypeScript server bun runs: its bare import resolves through a tsconfig.json's paths first.
mkdir -p node_modules/left-pad && printf '{"name":"left-pad","main":"index.js"}\\n' > node_modules/left-pad/package.json
echo 'module.exports = () => 1' > node_modules/left-pad/index.js
# It starts node too, as servers do: node inherits what bun loaded from the project's .env.
printf 'import lp from "left-pad";\\nlp();\\nBun.spawnSync(["node", "-e", "0"]);\\n' > tools/ctx.ts
# An .mcp.json server that node starts from a folder: the folder's package.json main runs.
mkdir -p mcpsrv && printf '{"main":"server.js"}\\n' > mcpsrv/package.json && echo 'process.exit(0)' > mcpsrv/server.js
mkdir docs && printf 'Use tabs.\\n@1.md\\n' > docs/rules.md
# Claude Code reads imports five hops deep: rules.md is the first, 4.md the fifth.
printf '@2.md\\n' > docs/1.md; printf '@3.md\\n' > docs/2.md; printf '@4.md\\n' > docs/3.md; echo 'Deep.' > docs/4.md
printf 'Be careful.\nSee @docs/rules.md\n' > CLAUDE.md
printf 'repos:\\n- repo: local\\n  hooks:\\n  - id: lint\\n    name: lint\\n    entry: ./scripts/lint.sh\\n    language: script\\n' > .pre-commit-config.yaml
printf '{\\n  "name": "repo",\\n  "scripts": {\\n    "lint": "node scripts/lint.js"\\n  },\\n  "simple-git-hooks": {\\n    "pre-commit": "npx lint-staged"\\n  }\\n}\\n' > package.json
git add -A && git commit -q -m init
git -c protocol.file.allow=always submodule add -q ../lib sub 2>/dev/null && git commit -q -m sub
git init -q -b main vendor/nested && git -C vendor/nested commit -q --allow-empty -m nested
for h in .git/hooks .git/modules/sub/hooks vendor/nested/.git/hooks; do ${EXIT0} > $h/pre-commit; chmod +x $h/pre-commit; done
# Hooks that run scripts of the tree: one a link to it (the usual \`make hooks\`), one calling it.
mkdir -p scripts/hooks && ${EXIT0} > scripts/hooks/prepare-commit-msg && ${EXIT0} > scripts/msg-check.sh
chmod +x scripts/hooks/prepare-commit-msg && ln -s ../../scripts/hooks/prepare-commit-msg .git/hooks/prepare-commit-msg
printf '#!/bin/sh\nexec sh scripts/msg-check.sh "$@"\n' > .git/hooks/commit-msg && chmod +x .git/hooks/commit-msg
# A hook that runs a build runner: make reads the Makefile of the work tree's root.
printf 'after-commit:\n\t@true\n' > Makefile && printf '#!/bin/sh\nmake -s after-commit\n' > .git/hooks/reference-transaction && chmod +x .git/hooks/reference-transaction
# The same runner by path, through env, in another folder (-C) with another file (-f).
mkdir -p build && printf 'after-commit:\n\t@true\n' > build/hooks.mk && printf 'env /usr/bin/make -s -C build -f hooks.mk after-commit\n' >> .git/hooks/reference-transaction
# An include of a file the tree does not have (yet): git reads it at every command.
git config include.path ../.gitconfig.project
# make reads the files its Makefile includes (-include: when they exist) and runs their recipes.
printf 'after-commit: common-check\ncommon-check:\n\t@sh scripts/common-check.sh\n' > rules.mk
echo 'LOCAL = 1' > local.mk && ${EXIT0} > scripts/common-check.sh
printf 'include rules.mk\n-include local.mk local-extra.mk\n' >> Makefile
# A bash hook that sources a bare-named file of the top level and runs a script by git's top level.
echo 'export HOOK_ENV=1' > hookenv && ${EXIT0} > scripts/post && chmod +x scripts/post
printf '#!/bin/bash\n"$(git rev-parse --show-toplevel)/scripts/post"\n. hookenv\n(cd scripts/cdhook && sh run.sh)\nexit 0\n' > .git/hooks/pre-commit
mkdir -p scripts/cdhook && ${EXIT0} > scripts/cdhook/run.sh
`;

const MANY = `set -e
mkdir many && cd many
git init -q -b main plain && git -C plain commit -q --allow-empty -m first
${EXIT0} > plain/.git/hooks/pre-commit; chmod +x plain/.git/hooks/pre-commit
mkdir -p plain/.vscode plain/tools && ${EXIT0} > plain/tools/dev.sh
printf '{"tasks":[{"label":"dev","command":"\${workspaceFolder}/tools/dev.sh","runOptions":{"runOn":"folderOpen"}}]}\n' > plain/.vscode/tasks.json
git init -q -b main husky && git -C husky commit -q --allow-empty -m first && git -C husky config core.hooksPath .husky/_
git init -q -b main husky9 && cd husky9
mkdir -p .husky/_ scripts
printf '#!/bin/sh\\nsh .husky/pre-commit\\n' > .husky/_/pre-commit; chmod +x .husky/_/pre-commit
echo 'sh scripts/check.sh' > .husky/pre-commit
# A local script the hook runs only when someone made it (none has).
echo '[ -f scripts/local-check.sh ] && sh scripts/local-check.sh || true' >> .husky/pre-commit
mkdir .idea && ${EXIT0} > scripts/start.sh
printf '<component name="ProjectStartupTaskManager"><task path="$PROJECT_DIR$/scripts/start.sh"/></component>\n' > .idea/workspace.xml
${EXIT0} > scripts/check.sh; chmod +x scripts/check.sh
git add -A && git commit -q -m husky && git config core.hooksPath .husky/_
cd ..
# A hook that runs package.json's lint, and again from web/, which has no package.json of
# its own yet (npm walks up to this one).
git init -q -b main npmpre && cd npmpre
mkdir -p .husky/_ web && echo 'module.exports = 1' > web/index.js
printf '#!/bin/sh\\nsh .husky/pre-commit\\n' > .husky/_/pre-commit; chmod +x .husky/_/pre-commit
printf 'npm run --silent lint\\ncd web && npm run --silent lint\\n' > .husky/pre-commit
printf '{"name":"npmpre","scripts":{"lint":"exit 0"}}\\n' > package.json
git add -A && git commit -q -m npmpre && git config core.hooksPath .husky/_
cd ..
# A hook that runs lint in every package of an npm workspace (packages/*, a new one too).
git init -q -b main npmws && cd npmws
mkdir -p .husky/_ packages/a
printf '#!/bin/sh\\nsh .husky/pre-commit\\n' > .husky/_/pre-commit; chmod +x .husky/_/pre-commit
printf 'npm run --silent lint --workspaces --if-present\\n' > .husky/pre-commit
printf '{"name":"npmws","private":true,"workspaces":["packages/*"]}\\n' > package.json
printf '{"name":"a","scripts":{"lint":"exit 0"}}\\n' > packages/a/package.json
git add -A && git commit -q -m npmws && git config core.hooksPath .husky/_
cd ..
git init -q -b main hookspath && cd hookspath
mkdir githooks tools && ${EXIT0} > githooks/pre-commit && chmod +x githooks/pre-commit
# A hook that runs a file beside its own folder, found from $0 (git runs it by its path).
printf '#!/bin/sh\n"\${0%%/*}/../tools/hook-check"\n' > githooks/post-commit && chmod +x githooks/post-commit
${EXIT0} > tools/hook-check && chmod +x tools/hook-check
git add -A && git commit -q -m hooks && git config core.hooksPath githooks
cd ..
git init -q -b main rebase && cd rebase
# Settings for the main branch only: an include git reads while main is checked out (not while a rebase
# has HEAD detached), which includes a local.inc beside it when one is made (none is).
mkdir conf && printf '[core]\n\tautocrlf = false\n[include]\n\tpath = local.inc\n' > conf/main.inc
git add conf && git commit -q -m conf && git config includeIf.onbranch:main.path ../conf/main.inc
for c in one two three; do echo $c > $c && git add $c && git commit -q -m $c; done
GIT_SEQUENCE_EDITOR="sed -i 1s/^pick/edit/" git rebase -q -i HEAD~2 >/dev/null 2>&1
test -f .git/rebase-merge/git-rebase-todo
cd ..
git init -q --bare -b main bare.git
# Drivers the user configured, whose programs are bare names of the work tree (run from its root).
git init -q -b main drivers && cd drivers
echo one > data.txt && ${EXIT0} > conv.sh
git add -A && git commit -q -m drivers
git config diff.conv.textconv "sh conv.sh" && git config filter.fmt.clean "node fmt-clean.js"
# A driver in the user's global config, its program a relative name: git resolves it in each repository.
mkdir g && echo one > g/data.txt && ${EXIT0} > gconv.sh && git add -A && git commit -q -m global
git config --global diff.gconv.textconv "sh ./gconv.sh"
# A relative include chain: .git/config includes ../conf/a.inc, which includes b.inc beside it.
mkdir conf && printf '[include]\n\tpath = b.inc\n' > conf/a.inc && printf '[core]\n\tautocrlf = false\n' > conf/b.inc
git add -A && git commit -q -m conf && git config --add include.path ../conf/a.inc
cd ..
# Programs the configs run by a name the host looks up, in folders git ignores: npx's
# node_modules/.bin, VS Code's Python interpreter in .venv, a bin/ that .envrc puts on PATH.
git init -q -b main progs && cd progs
printf 'node_modules/\n.venv/\n' > .gitignore
mkdir -p node_modules/lint-fix node_modules/.bin .venv/bin bin tools .claude .vscode
# Its bin requires the rest of its package by a bare path, as packages do (require("../lib/cli")).
printf '#!/usr/bin/env node\nrequire("./lib")\n' > node_modules/lint-fix/bin.js && chmod +x node_modules/lint-fix/bin.js
printf 'process.exit(0)\n' > node_modules/lint-fix/lib.js
# An MCP server npx fetches by a scoped name (none installed: the machine is offline).
printf '{"mcpServers":{"ctx":{"command":"npx","args":["-y","@acme/ctx-mcp"]}}}\n' > .mcp.json
ln -s ../lint-fix/bin.js node_modules/.bin/lint-fix
# A virtualenv as python -m venv --copies makes it: a copy of the system python (never a link to
# it: the control plants routes unguarded, as root, and a write through a link would land in
# /usr/bin), its pyvenv.cfg, its site-packages.
py=$(readlink -f "$(command -v python3)") && cp "$py" .venv/bin/python3 && ln -s python3 .venv/bin/python
printf 'home = %s\ninclude-system-site-packages = false\n' "$(dirname "$py")" > .venv/pyvenv.cfg
mkdir -p ${VENV_SITE}
${EXIT0} > bin/tool && chmod +x bin/tool && echo 'PATH_add bin' > .envrc
# direnv takes several folders, quoted and spelt from $PWD: the second is tools/.
${EXIT0} > tools/fmt && chmod +x tools/fmt && echo 'PATH_add sbin "$PWD/tools"' >> .envrc
# direnv's stdlib puts more folders first (layout node, php, go: node_modules/.bin, vendor/bin, .direnv/go/bin)
# and loads a private .envrc.local and a .env when they are there (neither is, until a job makes them).
printf 'layout node\nlayout php\nlayout go\nsource_env_if_exists .envrc.local\ndotenv_if_exists\n' >> .envrc
printf '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"npx --no-install lint-fix"},{"type":"command","command":"tool"},{"type":"command","command":"fmt"}]}]}}\n' > .claude/settings.json
printf '{"python.defaultInterpreterPath":"\${workspaceFolder}/.venv/bin/python"}\n' > .vscode/settings.json
git add -A && git commit -q -m progs
cd ..
# lint-staged as npm installs it (the real package, copied from the suite's copy in
# $DL_ATTACK_NODE_MODULES, layoutPackages, with one of its dependencies; node finds the others
# above the layout, in that folder), run by the pre-commit hook simple-git-hooks writes for
# \`npx lint-staged\`; its tasks are package.json's "lint-staged" key, run with node_modules/.bin
# first on PATH. The hook checks the docs with the real prettier first, which loads the
# project's prettier configuration (a file, or a package.json's "prettier" key, nearest
# each document first). A file is staged for the user's next commit, so the host's
# commit gives the task something to do.
git init -q -b main lintstaged && cd lintstaged
printf 'node_modules/\n' > .gitignore && printf '{"name":"ls","lint-staged":{"*.txt":"txtcheck","*.md":"prettier --check"}}\n' > package.json
echo '# Notes' > b.md && mkdir docs notes && echo '# Docs' > docs/c.md && echo '# More' > notes/d.md
printf '{"name":"docs"}\n' > docs/package.json && git add -A && git commit -q -m first
mkdir -p node_modules/.bin && cp -R "$DL_ATTACK_NODE_MODULES/lint-staged" "$DL_ATTACK_NODE_MODULES/micromatch" node_modules/
ln -s ../lint-staged/bin/lint-staged.js node_modules/.bin/lint-staged
ln -s "$DL_ATTACK_NODE_MODULES/prettier/bin/prettier.cjs" node_modules/.bin/prettier
printf '#!/bin/sh\nnode_modules/.bin/prettier --check b.md docs/c.md notes/d.md >/dev/null 2>&1\nexec node_modules/.bin/lint-staged --quiet\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
echo note > a.txt && echo '# New' > e.md && git add a.txt e.md
cd ..
# A Python project whose pre-commit hook runs its tests with the real pytest (Debian's
# python3-pytest, which .ci/run installs): pytest reads pyproject.toml's
# [tool.pytest.ini_options], as the editor's test discovery does when the folder opens.
git init -q -b main pyhooks && cd pyhooks
printf '[project]\nname = "py"\nversion = "0.1"\ndependencies = []\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n' > pyproject.toml
mkdir tests && printf 'def test_ok():\n    assert True\n' > tests/test_ok.py && git add -A && git commit -q -m first
printf '#!/bin/sh\nPYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider >/dev/null 2>&1\nexit 0\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
echo x > staged.txt && git add staged.txt
cd ..
# nbstripout --install (its own words): a clean filter and a textconv of the user's python -m nbstripout,
# stored with git's escaped quotes; git runs them from the work tree's root.
git init -q -b main nbstrip && cd nbstrip
printf '{"cells":[]}\n' > nb.ipynb && git add -A && git commit -q -m first
py=$(command -v python3)
git config filter.nbstripout.clean "\\"$py\\" -m nbstripout" && git config filter.nbstripout.smudge cat
git config diff.ipynb.textconv "\\"$py\\" -m nbstripout -t"
printf '*.ipynb filter=nbstripout diff=ipynb\n' > .git/info/attributes
cd ..
# A pipenv project whose .envrc is direnv's \`layout pipenv\` (its virtualenv in pipenv's WORKON_HOME, none
# in the tree): the shell Claude Code starts from has pipenv's bin/ first on PATH, and its hook runs python3.
git init -q -b main pipenv && cd pipenv
printf '.venv/\n' > .gitignore && printf '[packages]\n\n[dev-packages]\n' > Pipfile && echo 'layout pipenv' > .envrc
mkdir -p .claude scripts && echo 'print("ok")' > scripts/check.py
printf '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"python3 scripts/check.py"}]}]}}\n' > .claude/settings.json
git add -A && git commit -q -m pipenv
cd ..
# A node MCP server started with node's own --env-file (its settings in a gitignored .env, as node 20.6+ reads it).
git init -q -b main envfile && cd envfile
printf '.env\n' > .gitignore && echo 'API_BASE=http://localhost:8080' > .env
mkdir server && echo 'process.exit(0)' > server/mcp.js
printf '{"mcpServers":{"api":{"command":"node","args":["--env-file=.env","server/mcp.js"]}}}\n' > .mcp.json
git add -A && git commit -q -m envfile
cd ..
# A Rust crate whose pre-commit hook checks formatting with the machine's cargo, if it has one (CARGO_HOME).
git init -q -b main rust && cd rust
mkdir src && echo 'fn main() {}' > src/main.rs && printf '[package]\nname = "r"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
printf 'target/\n' > .gitignore && git add -A && git commit -q -m first
printf '#!/bin/sh\nexport RUSTUP_HOME=%s/.rustup CARGO_HOME=%s/.cargo PATH=%s/.cargo/bin:$PATH\ncargo fmt --all -- --check >/dev/null 2>&1\nexit 0\n' "$DL_ATTACK_RUST_HOME" "$DL_ATTACK_RUST_HOME" "$DL_ATTACK_RUST_HOME" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
cd ..
# A Pipfile project whose pre-commit hook runs \`pipenv run lint\` (Debian's pipenv, which .ci/run installs): its
# virtualenv where pipenv keeps them (~/.local/share/virtualenvs/<name>-<hash>), made as python -m venv --copies makes one.
git init -q -b main pipenvrun && cd pipenvrun
printf '[[source]]\nurl = "https://pypi.org/simple"\nverify_ssl = true\nname = "pypi"\n\n[packages]\n\n[dev-packages]\n\n[scripts]\nlint = "python -m py_compile app.py"\n' > Pipfile
printf '__pycache__/\n' > .gitignore && echo 'X = 1' > app.py && git add -A && git commit -q -m first
venv=$(/usr/bin/python3 -c 'from pipenv.project import Project; print(Project().virtualenv_location)')
py=$(readlink -f /usr/bin/python3) && mkdir -p "$venv/bin" && cp "$py" "$venv/bin/python3" && ln -sfn python3 "$venv/bin/python" && : > "$venv/bin/activate"
printf 'home = %s\ninclude-system-site-packages = false\n' "$(dirname "$py")" > "$venv/pyvenv.cfg"
printf '#!/bin/sh\npipenv run lint >/dev/null 2>&1\nexit 0\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
echo x > staged.txt && git add staged.txt
cd ..
`;

const WORKTREE = `set -e
git init -q -b main main && git -C main commit -q --allow-empty -m first
${EXIT0} > main/.git/hooks/pre-commit; chmod +x main/.git/hooks/pre-commit
git -C main worktree add -q -b feature ../wt
# The checkout's own hooks dir, written from the home (\`~/\`, the user's HOME holds the project),
# and a hook that runs a script of the tree by the same spelling.
rel=$(realpath --relative-to="$HOME" "$PWD/wt")
mkdir -p wt/tools/hooks wt/scripts && ${EXIT0} > wt/tools/hooks/pre-commit && ${EXIT0} > wt/scripts/home-check
printf '#!/bin/sh\n~/%s/scripts/home-check\n' "$rel" > wt/tools/hooks/post-commit
chmod +x wt/tools/hooks/pre-commit wt/tools/hooks/post-commit wt/scripts/home-check
git -C main config extensions.worktreeConfig true && git -C wt config --worktree core.hooksPath "~/$rel/tools/hooks"
# The user's global config includes a file of their dotfiles, kept in this checkout: the home links the folder.
mkdir -p wt/dotfiles && printf '[color]\n\tui = auto\n' > wt/dotfiles/gitconfig
ln -sfn "$PWD/wt/dotfiles" "$HOME/.dotgit"
git config --global --get include.path >/dev/null || git config --global include.path '~/.dotgit/gitconfig'
# The user's Claude Code status line script is stowed from the dotfiles checkout (a link per file, as GNU stow makes).
mkdir -p "$HOME/.claude" && echo 'echo st' > wt/dotfiles/statusline.sh && ln -sfn "$PWD/wt/dotfiles/statusline.sh" "$HOME/.claude/statusline.sh"
[ -f "$HOME/.claude/settings.json" ] || printf '{"statusLine":{"type":"command","command":"bash ~/.claude/statusline.sh"}}\n' > "$HOME/.claude/settings.json"
`;

const SUBDIR = `set -e
git init -q -b main outer && cd outer
mkdir -p pkg/hooks && ${EXIT0} > pkg/hooks/pre-commit && chmod +x pkg/hooks/pre-commit
echo 'export {}' > pkg/index.ts
# The repository's own Claude Code configuration, above the workdir, naming files inside it.
mkdir .claude && printf 'See @pkg/notes.md\\n' > CLAUDE.md && echo 'Notes.' > pkg/notes.md && echo 'echo ok' > pkg/status
printf '{"statusLine":{"type":"command","command":"bash pkg/status"}}\\n' > .claude/settings.json
git add -A && git commit -q -m first && git config core.hooksPath pkg/hooks
`;

export const LAYOUTS: Record<LayoutId, Layout> = {
  repo: { id: "repo", workdir: "repo", checkouts: ["repo", "repo/sub", "repo/vendor/nested"], build: REPO },
  many: {
    id: "many",
    workdir: "many",
    checkouts: [
      "many/plain",
      "many/husky",
      "many/husky9",
      "many/npmpre",
      "many/npmws",
      "many/hookspath",
      "many/rebase",
      "many/drivers",
      "many/lintstaged",
      "many/pyhooks",
      "many/nbstrip",
      "many/rust",
      "many/pipenv",
      "many/envfile",
      "many/pipenvrun",
    ],
    build: MANY,
  },
  worktree: { id: "worktree", workdir: "wt", checkouts: ["wt", "main"], build: WORKTREE },
  subdir: { id: "subdir", workdir: "outer/pkg", checkouts: ["outer"], build: SUBDIR },
};
