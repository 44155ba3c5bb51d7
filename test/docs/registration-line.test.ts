import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { registerArgv } from "../../src/cli/init-plan.ts";

/**
 * One registration line, the same wherever a person reads it — the README, docs/, the
 * examples, the plugin's docs, install.sh, the release archive's and the npm package's
 * READMEs, dl's own help — and the one dl init prints: `claude mcp add delegate-local
 * --scope user -- <the command that starts dl> serve`, no --env, no key. `--scope user`
 * because Claude Code's default scope (local) registers a server for the folder the line
 * is run in only, and the line is run once, for every project.
 */
const ROOT = resolve(import.meta.dir, "..", "..");
const PLACES = ["README.md", "docs", "examples", "plugin", "install.sh", "scripts", "src/cli"];
const FORM = /^claude mcp add delegate-local --scope user -- (\S+|"[^"]+"|'[^']+'|npx -y delegate-local) serve$/;

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full, { recursive: true, encoding: "utf8" })
    .map((f) => join(full, f))
    .filter((f) => statSync(f).isFile());
}

/** Every `claude mcp add delegate-local …` command written out in `text`, up to its `serve`. */
function lines(text: string): string[] {
  return [...text.matchAll(/claude mcp add delegate-local[^\n`]*/g)].map((m) => {
    const at = m[0].indexOf(" serve");
    return (at === -1 ? m[0] : m[0].slice(0, at + " serve".length)).trim();
  });
}

describe("the registration line", () => {
  test("is one form everywhere it is written out, without --env or a key", () => {
    const seen: string[] = [];
    for (const place of PLACES)
      for (const f of files(place)) {
        for (const l of lines(readFileSync(f, "utf8"))) {
          const where = `${relative(ROOT, f)}: ${l}`;
          seen.push(where);
          // A placeholder for the path (a shell expansion, the docs' <absolute path>) stands for one word.
          const bare = l
            .replace(/"\$\(command -v dl\)"|\$quoted|"\$DL"|<absolute path>\/dl/g, "/path/dl")
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder as npm-packages.ts writes it
            .replace("${LAUNCHER}", "delegate-local");
          expect({ where, ok: FORM.test(bare) }).toEqual({ where, ok: true });
        }
      }
    // It is written out in each place a person starts from.
    for (const must of [
      "README.md",
      "install.sh",
      "docs/INSTALL.md",
      "docs/HOSTS.md",
      "examples/hosts/claude-code-register.sh",
    ])
      expect(seen.some((w) => w.startsWith(`${must}:`))).toBe(true);
  });

  test("dl init's is the same form, and the README says why it is user scope", () => {
    expect(FORM.test(registerArgv(["/home/you/.local/bin/dl"]).join(" "))).toBe(true);
    expect(FORM.test(registerArgv(["npx", "-y", "delegate-local"]).join(" "))).toBe(true);
    expect(readFileSync(join(ROOT, "README.md"), "utf8")).toMatch(/--scope user[^.]*default[^.]*local/);
  });
});
