import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { editFileTool } from "../../src/agent/tools/edit-file.ts";
import { WRITE_FILE_DEFAULTS, type WriteFileSettings } from "../../src/agent/tools/settings.ts";
import type { ToolContext } from "../../src/agent/tools/types.ts";
import { writeFileTool } from "../../src/agent/tools/write-file.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * The package.json scripts a protected configuration runs, through the agent's write tools:
 * Claude Code's hook at the project root runs `npm run lint` there and `cd web && npm run
 * lint`. npm runs `prelint` first once it exists, and from web/ it reads web/package.json
 * once a job makes one (it walks up to the root's only while there is none).
 */

const ENV = { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
const settings: WriteFileSettings = { ...WRITE_FILE_DEFAULTS, protect: { writable: [], gitEnv: ENV } };
const write = writeFileTool(settings);
const edit = editFileTool(settings);
let c: ToolContext;

beforeAll(async () => {
  const workdir = realpathSync(tempDir("script-refusals"));
  await runGroup({ argv: ["git", "init", "-q"], cwd: workdir, env: ENV });
  mkdirSync(join(workdir, ".claude"));
  mkdirSync(join(workdir, "web"));
  writeFileSync(join(workdir, "web/index.js"), "");
  const command = "npm run --silent lint && cd web && npm run --silent lint";
  writeFileSync(
    join(workdir, ".claude/settings.json"),
    JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command }] }] } }),
  );
  writeFileSync(join(workdir, "package.json"), '{"name":"app","scripts":{"lint":"eslint ."}}\n');
  c = { workdir, allowEscape: false, signal: new AbortController().signal };
});

describe("write tools: scripts a protected configuration runs, there or not yet", () => {
  test("adding the prelint that npm run lint runs first is refused; another script is written", async () => {
    const r = await edit.run(
      { path: "package.json", old_string: '"lint":"eslint ."', new_string: '"lint":"eslint .","prelint":"sh x.sh"' },
      c,
    );
    expect(r.failure_kind).toBe("path_refused");
    expect(r.content).toContain("scripts.prelint");
    const ok = await edit.run(
      { path: "package.json", old_string: '"lint":"eslint ."', new_string: '"lint":"eslint .","build":"tsc"' },
      c,
    );
    expect(ok.is_error).toBe(false);
    expect(readFileSync(join(c.workdir, "package.json"), "utf8")).toContain('"build":"tsc"');
  });

  test("a new web/package.json with the lint the hook's cd web runs is refused; one without it is written", async () => {
    const r = await write.run({ path: "web/package.json", content: '{"scripts":{"lint":"sh x.sh"}}\n' }, c);
    expect(r.failure_kind).toBe("path_refused");
    expect(r.content).toContain("scripts.lint");
    const ok = await write.run({ path: "web/package.json", content: '{"name":"web","scripts":{"dev":"vite"}}\n' }, c);
    expect(ok.is_error).toBe(false);
  });

  test("a package.json deeper than the folder the hook runs in is not read by it: written", async () => {
    const r = await write.run({ path: "web/sub/package.json", content: '{"scripts":{"lint":"x"}}\n' }, c);
    expect(r.is_error).toBe(false);
  });
});
