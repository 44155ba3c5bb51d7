import { describe, expect, test } from "bun:test";
import { gitConfigText } from "../../src/sandbox/git-config-text.ts";

describe("a git config file as git reads its values", () => {
  test("escaped quotes, as nbstripout --install writes them, come out as the command git runs", () => {
    const text = '[filter "nbstripout"]\n\tclean = \\"/usr/bin/python3\\" -m nbstripout\n\trequired = true\n';
    expect(gitConfigText(text)).toBe(
      '[filter "nbstripout"]\n\tclean = "/usr/bin/python3" -m nbstripout\n\trequired = true\n',
    );
  });

  test("quotes removed, escapes decoded, a continued line joined, a comment outside quotes dropped", () => {
    const text = [
      '[core]\n\tfsmonitor = "./tools/watch.sh" ; the watcher',
      "\tpager = less\\\n -R",
      '\teditor = "vim # not a comment"',
      "\tbackslash = a\\\\b\\tc",
      "[alias]\n\tx",
    ].join("\n");
    expect(gitConfigText(text).split("\n")).toEqual([
      "[core]",
      "\tfsmonitor = ./tools/watch.sh",
      "\tpager = less -R",
      "\teditor = vim # not a comment",
      "\tbackslash = a\\b\tc",
      "[alias]",
      "\tx",
    ]);
  });

  test("a backslash in a comment continues nothing; a key on its header's line is read", () => {
    const text =
      '[filter "nbstripout"]\n\tsmudge = cat ; was: C:\\tools\\\n\tclean = \\"/usr/bin/python3\\" -m nbstripout\n# old \\\n[core] fsmonitor = \\"./w.sh\\"';
    expect(gitConfigText(text).split("\n")).toEqual([
      '[filter "nbstripout"]',
      "\tsmudge = cat",
      '\tclean = "/usr/bin/python3" -m nbstripout',
      "# old \\",
      "[core]",
      ' fsmonitor = "./w.sh"',
    ]);
  });
});
