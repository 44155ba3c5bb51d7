/**
 * Loaded by bunfig.toml before any test file. Every test (and every process a test
 * spawns, which inherits this environment) runs with HOME, the XDG dirs, CODEX_HOME and
 * every dl state dir inside one temporary folder, with dl's own test-isolation guard on.
 * At exit the real HOME is compared with a snapshot taken here: a test that wrote there
 * fails the run.
 */
import { afterAll } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diffHome, snapshotHome } from "./helpers/home-guard.ts";

const realHome = process.env.HOME ?? "";
const root = realpathSync(mkdtempSync(join(tmpdir(), "dl-test-")));
const home = join(root, "home");
mkdirSync(home, { recursive: true });

const before = realHome ? snapshotHome(realHome) : null;

for (const name of Object.keys(process.env)) {
  // A developer's own settings must not leak into the suite.
  if (name.startsWith("DELEGATE_") || name === "CODEX_HOME") delete process.env[name];
}
Object.assign(process.env, {
  HOME: home,
  XDG_CACHE_HOME: join(home, ".cache"),
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_STATE_HOME: join(home, ".local", "state"),
  XDG_DATA_HOME: join(home, ".local", "share"),
  CODEX_HOME: join(home, ".codex"),
  DELEGATE_TEST_ISOLATION: "1",
  // Most tests call every backend's tools, refusals included, on a machine that has none
  // of those backends; the tests of which tools are listed set DELEGATE_TOOLS themselves.
  DELEGATE_TOOLS: "all",
  DELEGATE_TEST_ISOLATION_ROOT: root,
  DL_TEST_ROOT: root,
  DL_REAL_HOME: realHome,
});

afterAll(() => {
  // Everything the suite wrote lives under the root: remove it in one go.
  rmSync(root, { recursive: true, force: true });
  if (!before) return;
  const changed = diffHome(before, snapshotHome(realHome));
  if (changed.length) {
    process.exitCode = 1;
    throw new Error(`tests wrote under the real HOME (${realHome}): ${changed.join(", ")}`);
  }
});
