import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { listAgents, parseAgentFile, parseFrontmatter } from "../../src/agent/frontmatter.ts";
import { tempDir } from "../helpers/dl.ts";

describe("parseFrontmatter", () => {
  test("reads name, description, model, tools and the body", () => {
    const p = parseFrontmatter(
      "---\nname: coder\ndescription: writes code\nmodel: glm-5\ntools: Read, Write, Bash\ncolor: blue\n---\n\nYou write code.\n",
      "coder.md",
    );
    expect(p.error).toBeUndefined();
    expect(p.meta.name).toBe("coder");
    expect(p.meta.description).toBe("writes code");
    expect(p.meta.model).toBe("glm-5");
    expect(p.meta.tools).toEqual(["Read", "Write", "Bash"]);
    expect(p.meta.raw.color).toBe("blue");
    expect(p.body).toBe("You write code.");
  });

  test("tools as a YAML list, CRLF line ends", () => {
    const p = parseFrontmatter("---\r\ntools:\r\n  - Read\r\n  - Bash\r\n---\r\nbody\r\n", "a.md");
    expect(p.error).toBeUndefined();
    expect(p.meta.tools).toEqual(["Read", "Bash"]);
    expect(p.body).toBe("body");
  });

  test("no frontmatter: the whole text is the body", () => {
    const p = parseFrontmatter("Just a prompt.\n---\nnot a header\n", "b.md");
    expect(p.error).toBeUndefined();
    expect(p.meta.raw).toEqual({});
    expect(p.body).toContain("not a header");
  });

  test("malformed YAML names the file and the line", () => {
    const p = parseFrontmatter("---\nname: x\ndescription: ok\nmodel: : bad\n---\nbody", "/agents/bad.md");
    expect(p.error).toStartWith("/agents/bad.md:4:");
    expect(p.error).toContain("model: : bad");
    expect(p.body).toBe("body");
  });

  test("an unterminated flow list is blamed on the line it opens", () => {
    const p = parseFrontmatter("---\nname: x\ntools: [Read, Write\nmodel: m\n---\n", "f.md");
    expect(p.error).toStartWith("f.md:3:");
  });

  test("an unclosed header and a non-mapping header are errors", () => {
    expect(parseFrontmatter("---\nname: x\nbody", "u.md").error).toStartWith("u.md:1:");
    expect(parseFrontmatter("---\n- a\n- b\n---\nbody", "l.md").error).toContain("mapping");
  });
});

describe("listAgents", () => {
  test("lists every .md sorted, malformed ones with their error", async () => {
    const dir = tempDir("agents");
    writeFileSync(join(dir, "reviewer.md"), "---\ndescription: reviews\nmodel: m1\n---\nReview.");
    writeFileSync(join(dir, "broken.md"), "---\ndescription: [oops\n---\nx");
    writeFileSync(join(dir, "plain.md"), "No header.");
    writeFileSync(join(dir, "notes.txt"), "ignored");
    const list = await listAgents(dir);
    expect(list.map((a) => a.name)).toEqual(["broken", "plain", "reviewer"]);
    expect(list[0]!.error).toContain("broken.md:2:");
    expect(list[1]).toEqual({ name: "plain", file: join(dir, "plain.md"), description: "", model: "" });
    expect(list[2]!.description).toBe("reviews");
    expect(list[2]!.model).toBe("m1");
  });

  test("a missing directory lists nothing; a missing file is an error, not a throw", async () => {
    expect(await listAgents("/nonexistent/agents/dir")).toEqual([]);
    expect((await parseAgentFile("/nonexistent/x.md")).error).toContain("ENOENT");
  });
});

test("the fixture agents: two good ones and one broken on line 3", async () => {
  const list = await listAgents(join(import.meta.dir, "..", "fixture", "agents"));
  expect(list.map((a) => a.name)).toEqual(["broken", "coder", "reviewer"]);
  expect(list[0]!.error).toMatch(/broken\.md:3: malformed YAML/);
  expect(list[1]!.error).toBeUndefined();
  expect(list[1]!.description).toContain("small, focused code changes");
  expect(list[2]!.error).toBeUndefined();
});
