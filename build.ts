/**
 * Builds dist/dl: one self-contained executable for the host (Linux x64/arm64, macOS
 * arm64/x64). The version comes from package.json and is baked in; the binary is told
 * not to read a user's bunfig.toml, .env, tsconfig or package.json at run time, because
 * dl's behaviour must depend only on its own code and DELEGATE_* variables.
 */
import { mkdirSync } from "node:fs";
import pkg from "./package.json" with { type: "json" };
import { LAZY_SDK_SCHEMAS } from "./scripts/lazy-sdk-schemas.ts";
import { toolCatalogue } from "./scripts/tool-catalogue.ts";

const HOST_TARGETS: Record<string, Bun.Build.CompileTarget> = {
  "linux-x64": "bun-linux-x64",
  "linux-arm64": "bun-linux-arm64",
  "darwin-x64": "bun-darwin-x64",
  "darwin-arm64": "bun-darwin-arm64",
};

const host = `${process.platform}-${process.arch}`;
const target = HOST_TARGETS[host];
if (!target) {
  console.error(`build.ts: unsupported host ${host}; dl builds for ${Object.keys(HOST_TARGETS).join(", ")}`);
  process.exit(2);
}

/**
 * dl builds only zod v4 schemas and never asks the client for elicitation, yet the MCP
 * SDK's server imports its zod v3 compatibility path (zod/v3, zod-to-json-schema) and
 * its default Ajv validator (ajv, ajv-formats, fast-uri) at start-up. Each of those
 * imports is replaced by a stub that throws if ever reached, which takes about 400 KB of
 * JavaScript out of every `dl serve` start. If the SDK starts to need another export of
 * them, the build fails on the missing export instead of shipping a broken binary.
 * (src/mcp/no-elicitation.ts is the validator dl hands the SDK instead of Ajv.)
 */
const UNUSED_SDK_PATHS: Bun.BunPlugin = {
  name: "dl-unused-sdk-paths",
  setup(build) {
    const stub = (filter: RegExp, contents: string) => {
      build.onResolve({ filter }, (args) =>
        args.importer.includes("@modelcontextprotocol/sdk") ? { path: args.path, namespace: "dl-stub" } : undefined,
      );
      build.onLoad({ filter, namespace: "dl-stub" }, () => ({ contents, loader: "js" }));
    };
    const fail = (what: string) => `() => { throw new Error("dl: ${what} is not built into this binary"); }`;
    stub(/^zod\/v3$/, `export const object = ${fail("zod v3")};`);
    stub(/^zod-to-json-schema$/, `export const zodToJsonSchema = ${fail("zod v3 JSON Schema")};`);
    stub(
      /validation\/ajv-provider\.js$/,
      `export class AjvJsonSchemaValidator { getValidator = ${fail("the SDK's default Ajv validator")}; }`,
    );
  },
};

mkdirSync("dist", { recursive: true });
const started = performance.now();
// What tools/list answers, made now so the binary never converts its tool schemas at run time.
const catalogue = await toolCatalogue(pkg.version);
const result = await Bun.build({
  entrypoints: ["./src/main.ts"],
  plugins: [UNUSED_SDK_PATHS, LAZY_SDK_SCHEMAS],
  minify: true,
  sourcemap: "none",
  bytecode: true,
  format: "esm",
  // Each lazily imported part (a command, the agent loop, a job service) is its own chunk
  // inside the binary, read only when imported: dl serve maps and keeps less of it
  // (bench/startup: ~1.5 MB less resident, and initialize a few ms sooner).
  splitting: true,
  define: { DL_VERSION: JSON.stringify(pkg.version), DL_TOOL_CATALOGUE: JSON.stringify(catalogue) },
  compile: {
    target,
    outfile: "./dist/dl",
    autoloadDotenv: false,
    autoloadBunfig: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
  },
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.error(`built dist/dl ${pkg.version} for ${target} in ${Math.round(performance.now() - started)} ms`);
