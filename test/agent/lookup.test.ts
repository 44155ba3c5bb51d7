import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lookupAgent } from "../../src/agent/lookup.ts";
import { isDlError } from "../../src/errors.ts";
import { tempDir } from "../helpers/dl.ts";

function setup() {
  const root = tempDir("lookup");
  const workdir = join(root, "proj");
  const agentsDir = join(root, "global");
  mkdirSync(join(workdir, ".claude", "agents"), { recursive: true });
  mkdirSync(join(workdir, ".claude", "skills", "skilled"), { recursive: true });
  mkdirSync(agentsDir, { recursive: true });
  writeFileSync(join(agentsDir, "coder.md"), "---\ndescription: global coder\n---\nGlobal body.");
  writeFileSync(join(agentsDir, "skilled.md"), "---\ndescription: global skilled\n---\nG");
  writeFileSync(join(agentsDir, "only-global.md"), "Only global.");
  writeFileSync(join(workdir, ".claude", "agents", "coder.md"), "---\ndescription: project coder\n---\nProject body.");
  writeFileSync(
    join(workdir, ".claude", "skills", "skilled", "SKILL.md"),
    "---\nname: skilled\ndescription: a skill\n---\nSkill body.",
  );
  return { workdir, agentsDir };
}

describe("lookupAgent", () => {
  test("project agent beats skill and global", async () => {
    const o = setup();
    const a = await lookupAgent("coder", o);
    expect(a.source).toBe("project-agent");
    expect(a.body).toBe("Project body.");
    expect(a.file).toBe(join(o.workdir, ".claude", "agents", "coder.md"));
  });

  test("project skill beats global", async () => {
    const o = setup();
    const a = await lookupAgent("skilled", o);
    expect(a.source).toBe("project-skill");
    expect(a.meta.description).toBe("a skill");
  });

  test("global is the fallback, and the only tier without a workdir", async () => {
    const o = setup();
    expect((await lookupAgent("only-global", o)).source).toBe("global");
    const a = await lookupAgent("coder", { agentsDir: o.agentsDir });
    expect(a.source).toBe("global");
    expect(a.body).toBe("Global body.");
  });

  test("a missing agent lists the three places it looked", async () => {
    const o = setup();
    const err = await lookupAgent("nobody", o).catch((e) => e);
    expect(isDlError(err, "not_found")).toBe(true);
    expect(err.message).toContain(join(o.workdir, ".claude", "agents", "nobody.md"));
    expect(err.message).toContain(join(o.workdir, ".claude", "skills", "nobody", "SKILL.md"));
    expect(err.message).toContain(join(o.agentsDir, "nobody.md"));
    expect(err.data.looked_in).toHaveLength(3);
  });

  test("names outside [A-Za-z0-9_-] are refused before touching the disk", async () => {
    const o = setup();
    for (const bad of ["../coder", "a/b", "coder.md", "", "x y", "..", "é"]) {
      const err = await lookupAgent(bad, o).catch((e) => e);
      expect(isDlError(err, "bad_input")).toBe(true);
    }
  });

  test("a malformed project agent is reported with file and line, not skipped", async () => {
    const o = setup();
    const file = join(o.workdir, ".claude", "agents", "coder.md");
    writeFileSync(file, "---\ndescription: ok\nmodel: : nope\n---\nbody");
    const err = await lookupAgent("coder", o).catch((e) => e);
    expect(isDlError(err, "bad_input")).toBe(true);
    expect(err.message).toContain(`${file}:3:`);
  });
});
