import { describe, expect, test } from "bun:test";
import { dlReads } from "../../src/sys/dl-reads.ts";

const inputs = (launcher: string, codexBin = "codex") => ({
  paths: { agentsDir: "/p/agents", codexHome: "/p/codex", dshModelsFile: "/p/dsh.json", claudeConfigDir: "/p/claude" },
  settings: { file: "/p/settings.env" },
  usage: {},
  codex: { bin: codexBin },
  gemini: { bin: "agy" },
  dsh: { launcher },
  callerDir: "/p",
});

describe("what dl reads back later", () => {
  test("each CLI setting that is a path is a program dl runs; a bare name is looked up on PATH", () => {
    const settings = (l: string, c?: string) => dlReads(inputs(l, c)).map((d) => `${d.setting} ${d.path}`);
    expect(settings("/p/tools/dsh-herdr.sh")).toContain("DELEGATE_DSH_LAUNCHER /p/tools/dsh-herdr.sh");
    expect(settings("tools/dsh-herdr.sh", "bin/codex")).toEqual(
      expect.arrayContaining(["DELEGATE_DSH_LAUNCHER /p/tools/dsh-herdr.sh", "DELEGATE_CODEX_BIN /p/bin/codex"]),
    );
    expect(settings("dsh-herdr.sh").some((s) => s.startsWith("DELEGATE_DSH_LAUNCHER"))).toBe(false);
    expect(dlReads(inputs("dsh-herdr.sh")).map((d) => d.setting)).toEqual([
      "DELEGATE_LOCAL_AGENTS_DIR",
      "CODEX_HOME",
      "the settings file",
      "DELEGATE_DSH_MODELS_FILE",
      "CLAUDE_CONFIG_DIR",
    ]);
  });
});
