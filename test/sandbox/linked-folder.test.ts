import { expect, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";
import { ruleForLinkedFolder } from "../../src/sys/protected-names.ts";
import { tempDir } from "../helpers/dl.ts";
import { HOST_ENV, tree } from "./file-tree.ts";

/**
 * A link named as a folder a rule protects names under (`.cargo`, `.config`, `.github`,
 * `mise`) stands for that folder: cargo opens `.cargo/config.toml` through the kernel,
 * which follows a link `.cargo` → `cfg`, so `cfg/config.toml` is cargo's settings.
 */
const ENV = HOST_ENV;

test("the names a link stands for: the folders rules protect names under, and no other", () => {
  for (const n of [".cargo", ".config", ".github", "mise", ".CARGO"]) expect(ruleForLinkedFolder(n)).not.toBeNull();
  for (const n of ["cfg", "src", "cargo", ".cargo2"]) expect(ruleForLinkedFolder(n)).toBeNull();
  expect(ruleForLinkedFolder(".cargo", true)).toBeNull(); // an installed package's: not the project's
});

test("a job that links .cargo to a folder of its own fails, and the link is moved out; a real .cargo folder stays the job's", async () => {
  const w = tree({ "rust/Cargo.toml": "", "rust/cfg/x.txt": "" }, "linked-folder");
  await runGroup({ argv: ["git", "init", "-q"], cwd: w, env: ENV });
  const out = realpathSync(tempDir("linked-folder-q"));
  const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: () => out });
  writeFileSync(join(w, "rust/cfg/config.toml"), '[alias]\nfmt = "run"\n');
  symlinkSync("cfg", join(w, "rust/.cargo"));
  mkdirSync(join(w, "other/.cargo/x"), { recursive: true });
  writeFileSync(join(w, "other/.cargo/x/Cargo.toml"), "");
  const verdict = await guard.finish();
  expect(verdict.tamper?.failureKind).toBe("jail_git_tampered");
  expect(verdict.tamper?.changed).toEqual(["rust/.cargo (new)"]);
  expect(existsSync(join(w, "rust/.cargo"))).toBe(false);
  expect(existsSync(join(w, "other/.cargo/x/Cargo.toml"))).toBe(true);
});
