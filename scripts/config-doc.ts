/**
 * Rewrites the generated tables of docs/CONFIGURATION.md from config.ts (`npm run docs`).
 * `--check` changes nothing and exits 1 when the file differs from what it would write
 * (test/docs/configuration-doc.test.ts runs the same comparison).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderConfigurationDoc } from "./config-doc/render.ts";

const file = join(import.meta.dir, "..", "docs", "CONFIGURATION.md");
const current = readFileSync(file, "utf8");
const next = renderConfigurationDoc(current);

if (process.argv.includes("--check")) {
  if (next !== current) {
    console.error("docs/CONFIGURATION.md is out of date with config.ts: run `npm run docs`");
    process.exit(1);
  }
  console.log("docs/CONFIGURATION.md matches config.ts");
} else if (next !== current) {
  writeFileSync(file, next);
  console.log("docs/CONFIGURATION.md rewritten from config.ts");
} else {
  console.log("docs/CONFIGURATION.md already matches config.ts");
}
