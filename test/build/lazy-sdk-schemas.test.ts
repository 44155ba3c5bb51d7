import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { LAZY_SDK_SCHEMAS, lazySchemas } from "../../scripts/lazy-sdk-schemas.ts";

const root = resolve(import.meta.dir, "../..");
const sdkTypes = join(root, "node_modules/@modelcontextprotocol/sdk/dist/esm/types.js");

test("every schema declaration of the SDK's types.js becomes lazy, and nothing else changes", async () => {
  const source = await Bun.file(sdkTypes).text();
  const { code, schemas } = lazySchemas(source);
  const declared = source.match(/^(?:export )?const [A-Za-z0-9_]+Schema = /gm) ?? [];
  expect(schemas).toBe(declared.length);
  expect(schemas).toBeGreaterThan(150);
  expect(code.match(/__dlLazySchema\(\(\) => \(/g)).toHaveLength(schemas);
  // Plain constants, functions and classes are left as they are.
  expect(code).toContain("export const LATEST_PROTOCOL_VERSION = '2025-11-25';");
  expect(code).toContain("export class McpError extends Error");
});

test("a file it cannot read as expected fails the build instead of shipping", () => {
  expect(() => lazySchemas("export const A = 1;\n")).toThrow(/found 0 schemas/);
  const many = Array.from({ length: 120 }, (_, i) => `export const S${i}Schema = z.string();`);
  expect(() => lazySchemas([...many, "export const BadSchema = z.string()"].join("\n"))).toThrow(/cannot delimit/);
});

/** The SDK's schemas, rewritten, in a real bundle: they parse, refuse and answer instanceof as before. */
test("rewritten schemas behave like the originals in a bundle", async () => {
  const dir = mkdtempSync(join(tmpdir(), "dl-lazy-"));
  try {
    const entry = join(root, "test/fixture/lazy-schemas-entry.ts");
    const out = join(dir, "out");
    const built = await Bun.build({ entrypoints: [entry], outdir: out, target: "bun", plugins: [LAZY_SDK_SCHEMAS] });
    expect(built.success).toBe(true);
    // The step did run: the bundle holds the stand-ins, not the eager declarations.
    expect(await Bun.file(join(out, "lazy-schemas-entry.js")).text()).toMatch(
      /InitializeRequestSchema = (\/\* @__PURE__ \*\/ )?lazySchema\(/,
    );
    const run = Bun.spawnSync(["bun", join(out, "lazy-schemas-entry.js")], { cwd: root, stderr: "pipe" });
    expect(run.stderr.toString()).toBe("");
    expect(JSON.parse(run.stdout.toString())).toEqual({
      init: true,
      initBad: false,
      message: true,
      messageBad: false,
      isZod: true,
      method: "initialize",
      result: "x",
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
