import { describe, expect, test } from "bun:test";
import { parseConfig } from "../src/config.ts";
import { parseSettingsText, updateSettingsText } from "../src/config-file.ts";
import { settingsFileProblem } from "../src/sys/settings-file.ts";

const env = { HOME: "/home/u", DELEGATE_TEST_ISOLATION: undefined };
const known = (n: string) => (n.startsWith("DELEGATE_") ? null : `${n} is not a dl setting`);

describe("the settings file's format", () => {
  test("NAME=value lines, comments and blanks skipped, one pair of quotes taken off, nothing expanded", () => {
    const text = "# c\n\nDELEGATE_A=1\nDELEGATE_B = \"two words\"\nexport DELEGATE_C='$HOME'\nDELEGATE_D=\n";
    expect(parseSettingsText(text, "f", known).values).toEqual({
      DELEGATE_A: "1",
      DELEGATE_B: "two words",
      DELEGATE_C: "$HOME",
      DELEGATE_D: "",
    });
  });

  test("a malformed line, an unknown name and a name set twice are refused with the file and line", () => {
    expect(() => parseSettingsText("DELEGATE_A 1\n", "f", known)).toThrow("f line 1: expected NAME=value");
    expect(() => parseSettingsText("\nPATH=/x\n", "f", known)).toThrow("f line 2: PATH is not a dl setting");
    expect(() => parseSettingsText("DELEGATE_A=1\nDELEGATE_A=2\n", "f", known)).toThrow(
      "f line 2: DELEGATE_A is set again (first on line 1)",
    );
  });

  test("an update replaces a name's line in place, keeps the rest, appends new names", () => {
    const old = "# mine\nDELEGATE_LOCAL_MODEL=old\nDELEGATE_MAX_NUDGES=1\n";
    expect(updateSettingsText(old, { DELEGATE_LOCAL_MODEL: "new", DELEGATE_LOCAL_URL: "http://x" }, "# h")).toBe(
      "# mine\nDELEGATE_LOCAL_MODEL=new\nDELEGATE_MAX_NUDGES=1\nDELEGATE_LOCAL_URL=http://x\n",
    );
    expect(updateSettingsText(null, { DELEGATE_LOCAL_MODEL: "m" }, "# h")).toBe("# h\nDELEGATE_LOCAL_MODEL=m\n");
  });

  test("a value that would not read back as itself is refused, naming the setting and never the value", () => {
    const injected = "m\nDELEGATE_LOCAL_URL=http://elsewhere";
    for (const value of [injected, "m\r", "a\u001b]0;x\u0007", "sk-key\u0001", " m", '"m"'])
      expect(() => updateSettingsText(null, { DELEGATE_LOCAL_MODEL: value }, "# h")).toThrow(
        /^DELEGATE_LOCAL_MODEL not written: its value (has a line break or a control character|starts or ends with a space or a quote)/,
      );
    try {
      updateSettingsText(null, { DELEGATE_LOCAL_KEY: "sk-key\nX=1" }, "# h");
    } catch (e) {
      expect(String(e)).not.toContain("sk-key");
    }
    expect(updateSettingsText(null, { DELEGATE_LOCAL_MODEL: "qwen2.5 coder:7b" }, "# h")).toBe(
      "# h\nDELEGATE_LOCAL_MODEL=qwen2.5 coder:7b\n",
    );
  });

  test("only a private regular file of this user is trusted", () => {
    const file = (mode: number, uid = 1000, isFile = true) => ({ isFile: () => isFile, uid, mode, size: 10 });
    expect(settingsFileProblem(file(0o100600), 1000, "f")).toBeNull();
    expect(settingsFileProblem(file(0o100640), 1000, "f")?.fix).toBe("run chmod 600 f, then dl status");
    expect(settingsFileProblem(file(0o100602), 1000, "f")?.problem).toContain("mode 0602");
    expect(settingsFileProblem(file(0o100600, 0), 1000, "f")?.problem).toContain("another user");
    expect(settingsFileProblem(file(0o010600, 1000, false), 1000, "f")?.problem).toContain("not a regular file");
  });
});

describe("environment over file over default", () => {
  test("the file fills what the environment leaves unset or blank; status sources say which", () => {
    const text = "DELEGATE_LOCAL_MODEL=from-file\nDELEGATE_MAX_NUDGES=5\nDELEGATE_CONCURRENCY_LOCAL_=3\n";
    const c = parseConfig(
      { ...env, DELEGATE_MAX_NUDGES: "1", DELEGATE_LOCAL_CODING_MODEL: " " },
      { settingsText: text },
    );
    expect(c.backend.model).toBe("from-file");
    expect(c.agent.maxNudges).toBe(1);
    expect(c.pools.bucketOverrides).toEqual({ LOCAL_: 3 });
    expect(c.settings.sources).toMatchObject({
      DELEGATE_LOCAL_MODEL: "file",
      DELEGATE_MAX_NUDGES: "environment",
      DELEGATE_LOCAL_CODING_MODEL: "default",
      DELEGATE_CONCURRENCY_LOCAL_: "file",
    });
    expect(c.settings.file).toBe("/home/u/.config/dl/settings.env");
  });

  test("XDG_CONFIG_HOME moves the file (not on macOS); a job's nested dl gets the file's values too", () => {
    const c = parseConfig({ ...env, XDG_CONFIG_HOME: "/x/conf" }, { settingsText: "DELEGATE_LOCAL_KEY=k1\n" });
    expect(c.settings.file).toBe("/x/conf/dl/settings.env");
    expect(c.dlChildEnv.DELEGATE_LOCAL_KEY).toBe("k1");
    const mac = parseConfig({ ...env, XDG_CONFIG_HOME: "/x/conf" }, { platform: "darwin", settingsText: null });
    expect(mac.settings.file).toBe("/home/u/.config/dl/settings.env");
  });
});
