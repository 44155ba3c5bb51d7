import { describe, expect, test } from "bun:test";
import { inheritedEnv, passthroughProblem } from "../../src/sys/child-env.ts";

/** A shell environment with every kind of name a child must or must not see. */
const ENV = {
  PATH: "/usr/bin",
  HOME: "/home/u",
  LANG: "C.UTF-8",
  LC_ALL: "C",
  TZ: "UTC",
  DELEGATE_LOCAL_KEY: "dl-local-key-ZQX1",
  OPENAI_API_KEY: "sk-openai-ZQX2",
  GITHUB_TOKEN: "ghp-ZQX3",
  AWS_SECRET_ACCESS_KEY: "aws-ZQX4",
  SOME_NEW_SERVICE_CONN: "postgres://u:p@db/ZQX5",
  EDITOR: "vim",
  NPM_CONFIG_REGISTRY: "https://registry.example",
  NPM_CONFIG_AUTH_TOKEN: "npm-ZQX6",
  NODE_OPTIONS: "--max-old-space-size=512",
  UNSET_ONE: undefined,
};

describe("child environment allowlist", () => {
  test("with no passthrough only the fixed allowlist is inherited; anything unlisted stays out", () => {
    expect(inheritedEnv(ENV, [])).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/u",
      LANG: "C.UTF-8",
      LC_ALL: "C",
      TZ: "UTC",
    });
  });

  test("the locale variables pass by their exact names; an LC_ name that says credential (ssh's AcceptEnv LC_*) does not", () => {
    const env = {
      LC_CTYPE: "C.UTF-8",
      LC_TIME: "C",
      LC_API_TOKEN: "lc-ZQX7-secret",
      LC_SESSION: "ZQX8-abc",
      LC_OTHER: "x",
    };
    expect(inheritedEnv(env, [])).toEqual({ LC_CTYPE: "C.UTF-8", LC_TIME: "C" });
    expect(JSON.stringify(inheritedEnv(env, ["LC_*"]))).not.toContain("ZQX");
  });

  test("an exact passthrough name is passed; a prefix passes matching names except credential-looking ones", () => {
    const out = inheritedEnv(ENV, ["NODE_OPTIONS", "NPM_CONFIG_*"]);
    expect(out.NODE_OPTIONS).toBe("--max-old-space-size=512");
    expect(out.NPM_CONFIG_REGISTRY).toBe("https://registry.example");
    expect(out).not.toHaveProperty("NPM_CONFIG_AUTH_TOKEN");
    expect(out).not.toHaveProperty("EDITOR");
  });

  test("DELEGATE_LOCAL_KEY never reaches a child, even named exactly or through a catch-all prefix", () => {
    for (const pass of [["DELEGATE_LOCAL_KEY"], ["DELEGATE_*"], ["*"], ["D*"]]) {
      expect(inheritedEnv(ENV, pass)).not.toHaveProperty("DELEGATE_LOCAL_KEY");
    }
  });

  test("no secret value survives any prefix passthrough", () => {
    const out = JSON.stringify(inheritedEnv(ENV, ["O*", "G*", "A*", "S*", "N*", "D*"]));
    for (const marker of ["ZQX1", "ZQX2", "ZQX3", "ZQX4", "ZQX6"]) expect(out).not.toContain(marker);
  });

  test("configuration refuses credential-looking entries and malformed names, naming what is allowed", () => {
    for (const bad of ["OPENAI_API_KEY", "GITHUB_TOKEN", "MY_SECRET", "DB_PASSWORD", "DELEGATE_LOCAL_KEY", "*_AUTH*"]) {
      const why = passthroughProblem([bad]);
      expect(why, bad).toBeString();
    }
    expect(passthroughProblem(["OPENAI_API_KEY"])).toContain("OPENAI_API_KEY is refused");
    expect(passthroughProblem(["bad name"])).toContain("environment variable names");
    expect(passthroughProblem(["NODE_OPTIONS", "NPM_CONFIG_*"])).toBeUndefined();
  });
});
