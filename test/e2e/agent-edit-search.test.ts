import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";

/**
 * Issue 24 items 1-3 through the compiled binary: edit_file, search_files and list_files
 * as a model calls them (scripted fake on 127.0.0.1), through `dist/dl run` and
 * `dist/dl serve`, and the read-only tool set Claude Code's names grant.
 */
let fake: FakeModel;
let session: DlSession;
const agentsDir = () => join(process.env.DL_TEST_ROOT!, "edit-search-agents");

beforeAll(async () => {
  fake = await startFakeModel();
  mkdirSync(agentsDir(), { recursive: true });
  writeFileSync(join(agentsDir(), "helper.md"), "---\nname: helper\n---\nHelp.\n");
  writeFileSync(join(agentsDir(), "looker.md"), "---\nname: looker\ntools: Read, Grep, Glob\n---\nLook only.\n");
  session = await connectDl({ DELEGATE_LOCAL_URL: fake.anthropicUrl, DELEGATE_LOCAL_AGENTS_DIR: agentsDir() });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});
beforeEach(() => fake.reset());

/** The text of the tool_result blocks in a request's last message. */
function lastResults(r: RecordedRequest | undefined): string[] {
  const msgs = (r?.body.messages ?? []) as { content: unknown }[];
  const last = msgs.at(-1)?.content;
  if (!Array.isArray(last)) return [];
  return last.filter((b) => b.type === "tool_result").map((b) => String(b.content));
}

const delegate = (agent_name: string, workdir: string) =>
  callTool(session, "delegate_to_local_agent", { agent_name, task: "t", workdir });

describe("edit_file through dist/dl run", () => {
  test("one line of a 3,000-line file changes and every other byte stays; an ambiguous edit is refused with its count", async () => {
    const dir = tempDir("edit");
    const lines = Array.from({ length: 3000 }, (_, i) => `const line${i} = ${i}; // the same tail`);
    lines[1499] = "const target = 'old';";
    const before = `${lines.join("\n")}\n`;
    const file = join(dir, "big.ts");
    writeFileSync(file, before);
    chmodSync(file, 0o755);
    fake.script(
      reply.tool("edit_file", {
        path: "big.ts",
        old_string: "const target = 'old';",
        new_string: "const target = 'new';",
      }),
      reply.tool("edit_file", { path: "big.ts", old_string: "// the same tail", new_string: "// changed" }),
      reply.text("edited"),
    );
    const r = await runDl(["run", "helper", "edit", "--workdir", dir, "--json"], {
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_AGENTS_DIR: agentsDir(),
    });
    expect(r.code).toBe(0);
    expect(lastResults(fake.requests[1])).toEqual(["edited big.ts: 1 replacement; new text at line 1500"]);
    const ambiguous = lastResults(fake.requests[2])[0]!;
    expect(ambiguous).toContain("old_string matches 2999 places in big.ts (lines 1, 2, 3,");
    expect(ambiguous).toContain("replace_all: true");
    expect(readFileSync(file, "utf8")).toBe(before.replace("const target = 'old';", "const target = 'new';"));
    expect(statSync(file).mode & 0o777).toBe(0o755);
  });
});

describe("search_files and list_files through dist/dl serve", () => {
  function project(): string {
    const dir = tempDir("search");
    mkdirSync(join(dir, "src"), { recursive: true });
    mkdirSync(join(dir, "vendor"), { recursive: true });
    writeFileSync(join(dir, ".gitignore"), "vendor/\n");
    for (let i = 0; i < 30; i++)
      writeFileSync(join(dir, "src", `use${i}.ts`), `import { parseConfig } from "./def";\nparseConfig(${i});\n`);
    writeFileSync(
      join(dir, "src", "def.ts"),
      "// config\n\nexport function parseConfig(n: number) {\n  return n;\n}\n",
    );
    writeFileSync(join(dir, "vendor", "copy.ts"), "export function parseConfig() {}\n");
    writeFileSync(join(dir, "blob.bin"), Buffer.from("export function parseConfig\0\x01\x02"));
    return dir;
  }

  test("search_files finds a definition (not in gitignored or binary files) and stops at its cap with a note", async () => {
    const dir = project();
    fake.script(
      reply.tool("search_files", { pattern: "function\\s+parseConfig\\(" }),
      reply.tool("search_files", { pattern: "parseConfig", glob: "*.ts", max_results: 5 }),
      reply.tool("list_files", { glob: "src/def*" }),
      reply.text("found it"),
    );
    const res = await delegate("helper", dir);
    expect(res.isError).toBeFalsy();
    expect(lastResults(fake.requests[1])[0]).toBe(
      "src/def.ts:3: export function parseConfig(n: number) {\n[files skipped: 1 binary]",
    );
    const capped = lastResults(fake.requests[2])[0]!.split("\n");
    expect(capped.slice(0, 5).every((l) => /^src\/\S+\.ts:\d+: /.test(l))).toBe(true);
    expect(capped[5]).toStartWith("[search cut: the first 5 matching lines are shown;");
    expect(capped).toHaveLength(6);
    expect(lastResults(fake.requests[3])).toEqual(["src/def.ts"]);
  });

  test("a symlink out of the workdir is neither followed by search or list nor editable", async () => {
    const dir = project();
    const outside = tempDir("outside");
    writeFileSync(join(outside, "secret.ts"), "export function parseConfig() { return 'SECRET-OUTSIDE'; }\n");
    symlinkSync(outside, join(dir, "src", "linked"));
    symlinkSync(join(outside, "secret.ts"), join(dir, "src", "secret-link.ts"));
    fake.script(
      reply.tool("search_files", { pattern: "S.CRET" }),
      reply.tool("list_files", {}),
      reply.tool("search_files", { pattern: "S.CRET", path: "src/linked" }),
      reply.tool("edit_file", { path: "src/secret-link.ts", old_string: "return", new_string: "PWNED" }),
      reply.tool("list_files", { path: "src/linked" }),
      reply.text("done"),
    );
    await delegate("helper", dir);
    expect(lastResults(fake.requests[1])[0]).toStartWith('no line matches "S.CRET" in 33 files under .');
    expect(lastResults(fake.requests[2])[0]).not.toContain("secret");
    expect(lastResults(fake.requests[2])[0]).not.toContain("linked");
    for (const i of [3, 4, 5]) expect(lastResults(fake.requests[i])[0]).toContain("outside the working directory");
    expect(JSON.stringify(fake.requests.map((q) => q.body)).includes("SECRET-OUTSIDE")).toBe(false);
    expect(readFileSync(join(outside, "secret.ts"), "utf8")).toContain("SECRET-OUTSIDE");
  });

  test("a catastrophic pattern runs in linear time and a huge file is skipped, both said in the result", async () => {
    const dir = tempDir("redos");
    writeFileSync(join(dir, "evil.txt"), `${"a".repeat(50_000)}!\n`);
    writeFileSync(join(dir, "huge.log"), `${"x".repeat(5 * 1024 * 1024)}\nNEEDLE\n`);
    writeFileSync(join(dir, "small.txt"), "NEEDLE here\n");
    fake.script(
      reply.tool("search_files", { pattern: "(a+)+$" }),
      reply.tool("search_files", { pattern: "NEEDLE" }),
      reply.text("done"),
    );
    await delegate("helper", dir);
    // A backtracking engine would still be on evil.txt's one line (2^50000 paths).
    expect(lastResults(fake.requests[1])[0]).toContain('no line matches "(a+)+$" in 3 files under .');
    expect(lastResults(fake.requests[1])[0]).toContain("[files skipped: 1 over 4 MB]");
    expect(lastResults(fake.requests[2])[0]).toBe("small.txt:1: NEEDLE here\n[files skipped: 1 over 4 MB]");
  });
});

describe("a read-only agent (tools: Read, Grep, Glob) through dist/dl serve", () => {
  test("it can search and list, but cannot write, edit or run a command", async () => {
    const dir = tempDir("readonly");
    writeFileSync(join(dir, "a.ts"), "export const a = 1;\n");
    fake.script(
      reply.tool("search_files", { pattern: "const a" }),
      reply.tool("list_files", {}),
      reply.tool("write_file", { path: "planted.txt", content: "x" }),
      reply.tool("edit_file", { path: "a.ts", old_string: "= 1", new_string: "= 2" }),
      reply.tool("run_bash", { command: "touch ran" }),
      reply.text("looked"),
    );
    const res = await delegate("looker", dir);
    expect(res.isError).toBeFalsy();
    const offered = (fake.requests[0]!.body.tools as { name: string }[]).map((t) => t.name);
    expect(offered).toEqual(["read_file", "search_files", "list_files"]);
    expect(String(fake.requests[0]!.body.system)).toContain("call search_files; list_files lists files by glob");
    expect(String(fake.requests[0]!.body.system)).not.toContain("edit_file");
    expect(lastResults(fake.requests[1])).toEqual(["a.ts:1: export const a = 1;"]);
    expect(lastResults(fake.requests[2])).toEqual(["a.ts"]);
    for (const [i, tool] of [
      [3, "write_file"],
      [4, "edit_file"],
      [5, "run_bash"],
    ] as const) {
      expect(lastResults(fake.requests[i])[0]).toStartWith(`${tool} is not available to agent 'looker'`);
    }
    expect(existsSync(join(dir, "planted.txt"))).toBe(false);
    expect(existsSync(join(dir, "ran"))).toBe(false);
    expect(readFileSync(join(dir, "a.ts"), "utf8")).toBe("export const a = 1;\n");
    expect((res.data as { bash_calls: number }).bash_calls).toBe(0);
  });
});
