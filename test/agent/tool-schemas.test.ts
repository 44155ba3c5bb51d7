import { describe, expect, test } from "bun:test";
import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildTools } from "../../src/agent/tools/index.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";
import { tempDir } from "../helpers/dl.ts";

/** Each agent tool has one zod schema: the JSON Schema the model sees and the argument parser. */
const tools = buildTools({ bash: { ...defaultAgentSettings().bash, baseEnv: { PATH: process.env.PATH } } });
const ctx = () => ({
  workdir: realpathSync(tempDir("schemas")),
  allowEscape: false,
  signal: new AbortController().signal,
});

describe("agent tool schemas", () => {
  test("the model sees each argument with its type, description and the required list", () => {
    const schemaOf = (name: string) => tools.get(name)?.spec.input_schema;
    expect(schemaOf("read_file")).toEqual({
      type: "object",
      properties: {
        path: { type: "string", description: "File path, relative to the working directory" },
        offset: { type: "integer", minimum: 1, description: "First line to read, 1-based (default 1)" },
        limit: {
          type: "integer",
          minimum: 1,
          description: "How many lines to read (default: as many as fit in one call)",
        },
      },
      required: ["path"],
    });
    expect(schemaOf("write_file")).toEqual({
      type: "object",
      properties: {
        path: { type: "string", description: "File path, relative to the working directory" },
        content: { type: "string", description: "The complete new content of the file" },
      },
      required: ["path", "content"],
    });
    expect(schemaOf("run_bash")).toEqual({
      type: "object",
      properties: { command: { type: "string", description: "The command line, run with bash -c" } },
      required: ["command"],
    });
  });

  test("the same schema object is sent on every run, so request encoding can be cached", () => {
    const again = buildTools({ bash: { ...defaultAgentSettings().bash, baseEnv: {} } });
    expect(again.get("read_file")?.spec.input_schema).toBe(tools.get("read_file")!.spec.input_schema);
  });

  test("arguments that do not fit come back as an error naming each bad argument", async () => {
    const c = ctx();
    const read = tools.get("read_file")!;
    const bad = await read.run({ path: "f.txt", offset: "abc", limit: 2.5 }, c);
    expect(bad).toEqual({
      content: "read_file: offset must be an integer >= 1; limit must be an integer >= 1",
      is_error: true,
    });
    expect((await read.run({}, c)).content).toBe(
      "read_file: path is missing: pass a file path relative to the working directory",
    );
    expect((await read.run({ path: 7 }, c)).content).toContain("path must be a string");
    const write = await tools.get("write_file")!.run({ path: "x.txt" }, c);
    expect(write.content).toBe("write_file: content must be a string (the whole file)");
    const bash = await tools.get("run_bash")!.run({ command: "   " }, c);
    expect(bash).toEqual({ content: "run_bash: command must be a non-empty string", is_error: true });
  });

  test("numbers sent as strings, and empty or null optional numbers, are accepted", async () => {
    const c = ctx();
    writeFileSync(join(c.workdir, "f.txt"), "a\nb\nc\nd\n");
    const read = tools.get("read_file")!;
    expect((await read.run({ path: "f.txt", offset: " 2 ", limit: "2" }, c)).content).toStartWith("[lines 2-3 of 4]");
    expect((await read.run({ path: "f.txt", offset: "", limit: null }, c)).content).toStartWith("[lines 1-4 of 4]");
  });
});
