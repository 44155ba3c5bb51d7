import { expect, test } from "bun:test";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { runDl, tempDir } from "../helpers/dl.ts";

/**
 * A store under a folder other users may write (not sticky) is refused read-only too:
 * they could rename dl's state folder away and put their own store in its place between
 * dl's check and SQLite's open (sys/safe-ancestors.ts). `dl status` names the folder and
 * the chmod; `dl jobs` refuses the store rather than reading one another user may have put there.
 */
test("dl jobs and dl status under a folder others may write: refused, naming it and the fix", async () => {
  const open = join(tempDir("unsafe-ancestors"), "shared");
  const state = join(open, "codex");
  mkdirSync(open);
  const env = { DELEGATE_CODEX_STATE_DIR: state };
  // Made while the folder is safe, as the user's dl made it before someone loosened the folder above.
  JobStore.open(state).close();
  const before = await runDl(["jobs", "--json"], env);
  expect(before.code).toBe(0);
  chmodSync(open, 0o777);
  const jobs = await runDl(["jobs", "--json"], env);
  expect(jobs.code).not.toBe(0);
  expect(jobs.stderr).toContain(`${open} is writable by other users (mode 777, not sticky)`);
  const status = await runDl(["status", "--json"], env);
  const codex = (JSON.parse(status.stdout) as { state_dirs: { name: string; error?: string }[] }).state_dirs.find(
    (d) => d.name === "codex jobs",
  );
  expect(codex?.error).toContain(`chmod go-w ${open}`);
  chmodSync(open, 0o1777); // sticky: nobody renames what another user owns
  expect((await runDl(["jobs", "--json"], env)).code).toBe(0);
});
