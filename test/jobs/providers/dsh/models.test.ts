import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadDshModels, resolveDshModel } from "../../../../src/jobs/providers/dsh/models.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { refusal } from "../../../helpers/refusal.ts";

const EXAMPLE = join(import.meta.dir, "..", "..", "..", "..", "examples", "dsh-models.json");

test("the shipped example parses: enabled aliases resolve, by alias or real name", () => {
  const models = loadDshModels(EXAMPLE);
  expect(resolveDshModel("ds-v4-flash", models, EXAMPLE).model).toBe("deepseek-v4-flash");
  expect(resolveDshModel("deepseek-v4-flash-max", models, EXAMPLE).alias).toBe("ds-v4-flash-max");
});

test("unknown and disabled models are refused with the enabled list", () => {
  const models = loadDshModels(EXAMPLE);
  expect(refusal(() => resolveDshModel("gpt-9", models, EXAMPLE))).toMatch(
    /unknown dsh model "gpt-9".*ds-v4-flash, ds-v4-flash-max/,
  );
  expect(refusal(() => resolveDshModel("local-qwen", models, EXAMPLE))).toMatch(
    /disabled.*enabled: ds-v4-flash, ds-v4-flash-max/,
  );
  expect(refusal(() => resolveDshModel("__proto__", models, EXAMPLE))).toMatch(/unknown dsh model "__proto__"/);
  expect(refusal(() => resolveDshModel("constructor", models, EXAMPLE))).toMatch(/unknown dsh model/);
});

test("mimo and xiaomi models are refused even when the file enables them", () => {
  const file = join(tempDir("dsh-models"), "models.json");
  writeFileSync(
    file,
    JSON.stringify({
      models: {
        "mimo-v2": { model: "mimo-v2", enabled: true },
        fast: { model: "xiaomi/mimo-v2-flash", enabled: true },
        ok: { model: "deepseek-v4-flash", enabled: true },
      },
    }),
  );
  const models = loadDshModels(file);
  for (const name of ["mimo-v2", "MiMo-7B", "xiaomi-anything", "fast", "xiaomi/mimo-v2-flash"]) {
    expect(refusal(() => resolveDshModel(name, models, file))).toMatch(/Xiaomi MiMo.*terms forbid automation/);
  }
  expect(resolveDshModel("ok", models, file).model).toBe("deepseek-v4-flash");
});

test("no file refuses everything and says where the file goes; a malformed file names the problem", () => {
  const dir = tempDir("dsh-models");
  const missing = join(dir, "none.json");
  expect(loadDshModels(missing)).toBeNull();
  expect(refusal(() => resolveDshModel("ds-v4-flash", null, missing))).toContain(`${missing} does not exist`);
  const bad = join(dir, "bad.json");
  writeFileSync(bad, '{"models": {"x": {"model": "y", "enabled": "yes"}}}');
  expect(refusal(() => loadDshModels(bad))).toMatch(/malformed at models\.x\.enabled/);
  writeFileSync(bad, "{not json");
  expect(refusal(() => loadDshModels(bad))).toMatch(/not valid JSON/);
});
