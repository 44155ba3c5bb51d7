/**
 * The metadata that points registries and Claude Code at dl: server.json is valid against
 * the MCP Registry's published schema (vendored in mcp-registry/, so nothing is fetched)
 * and names the npm launcher whose package.json carries the same mcpName; every version in
 * server.json, the plugin and the marketplace is package.json's, and the release script's
 * sync puts it there; the plugin's server is `dl serve` with its options passed under the
 * settings file's names.
 */
import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { TARGETS, type TargetName } from "../../build.ts";
import pkg from "../../package.json" with { type: "json" };
import { LAUNCHER, launcherManifest, MCP_NAME } from "../../scripts/npm-packages.ts";
import { syncVersions, VERSIONED_FILES, versionsIn } from "../../scripts/release-metadata.ts";
import { tempDir } from "../helpers/dl.ts";
import { ROOT } from "./helpers.ts";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
const schema = readJson(join(import.meta.dir, "mcp-registry", "server.schema.json"));
const server = readJson(join(ROOT, "server.json"));

function validator() {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(schema);
}

describe("server.json for the MCP Registry", () => {
  test("is valid against the vendored 2025-12-11 schema, which it names", () => {
    expect(schema.$id).toBe("https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json");
    expect(server.$schema).toBe(schema.$id);
    const validate = validator();
    expect(validate(server) ? [] : validate.errors).toEqual([]);
  });

  test("the validator refuses what the registry refuses: a name without a namespace, version latest, a long description", () => {
    const validate = validator();
    const [pkg0] = server.packages as Record<string, unknown>[];
    for (const bad of [
      { ...server, name: "dl" },
      { ...server, packages: [{ ...pkg0, version: "latest" }] },
      { ...server, description: "x".repeat(101) },
    ])
      expect(validate(bad)).toBe(false);
  });

  test("names the npm launcher, run as npx … serve over stdio, whose package.json has the same mcpName", () => {
    const [entry, ...others] = server.packages as Record<string, unknown>[];
    expect(others).toEqual([]);
    expect(entry).toMatchObject({
      registryType: "npm",
      identifier: LAUNCHER,
      runtimeHint: "npx",
      transport: { type: "stdio" },
      packageArguments: [{ type: "positional", value: "serve" }],
    });
    expect(server.name).toBe(MCP_NAME);
    expect(launcherManifest(Object.keys(TARGETS) as TargetName[], pkg.version).mcpName).toBe(MCP_NAME);
    const secrets = (entry!.environmentVariables as { name: string; isSecret?: boolean }[]).filter((v) => v.isSecret);
    expect(secrets.map((v) => v.name)).toEqual(["DELEGATE_LOCAL_KEY"]);
  });
});

describe("versions in step", () => {
  test("every version in server.json, the plugin and the marketplace is package.json's", () => {
    const found = versionsIn(ROOT);
    expect(new Set(found.map((f) => f.file))).toEqual(new Set(VERSIONED_FILES));
    expect(found.filter((f) => f.version !== pkg.version)).toEqual([]);
  });

  test("the release script's sync writes the version into each file, keeping everything else", () => {
    const copy = tempDir("metadata");
    for (const f of VERSIONED_FILES) {
      mkdirSync(dirname(join(copy, f)), { recursive: true });
      cpSync(join(ROOT, f), join(copy, f));
    }
    expect(syncVersions(copy, "9.8.7").sort()).toEqual([...VERSIONED_FILES].sort());
    expect(versionsIn(copy).every((f) => f.version === "9.8.7")).toBe(true);
    const before = readFileSync(join(ROOT, "server.json"), "utf8");
    expect(readFileSync(join(copy, "server.json"), "utf8")).toBe(before.replaceAll(`"${pkg.version}"`, '"9.8.7"'));
    expect(syncVersions(copy, "9.8.7")).toEqual([]);
    writeFileSync(join(copy, "server.json"), before);
    expect(syncVersions(copy, "9.8.7")).toEqual(["server.json"]);
  });
});

describe("the Claude Code plugin", () => {
  const plugin = readJson(join(ROOT, "plugin", ".claude-plugin", "plugin.json"));
  const market = readJson(join(ROOT, ".claude-plugin", "marketplace.json"));

  test("the marketplace lists the plugin folder under the plugin's own name", () => {
    expect(market.plugins).toEqual([expect.objectContaining({ name: plugin.name, source: "./plugin" })]);
  });

  test("its server is dl serve from PATH, given its options under the settings file's names, the key as a secret", () => {
    const option = (key: string) => `\${user_config.${key}}`;
    expect(plugin.mcpServers).toEqual({
      "delegate-local": {
        command: "dl",
        args: ["serve"],
        env: {
          DELEGATE_LOCAL_URL: option("endpoint"),
          DELEGATE_LOCAL_MODEL: option("model"),
          DELEGATE_LOCAL_KEY: option("key"),
        },
      },
    });
    const config = plugin.userConfig as Record<string, { sensitive?: boolean; required?: boolean }>;
    expect(Object.keys(config).sort()).toEqual(["endpoint", "key", "model"]);
    expect(
      Object.entries(config)
        .filter(([, o]) => o.sensitive)
        .map(([k]) => k),
    ).toEqual(["key"]);
    // Optional, so that an option left empty leaves dl's settings file in charge.
    expect(Object.values(config).some((o) => o.required)).toBe(false);
  });
});
