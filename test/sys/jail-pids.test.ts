import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { pidsCgroup } from "../../src/sys/jail-pids.ts";

/**
 * The pids cgroup of a jail started as root. Several dl processes start jails at once, and
 * each start sweeps the empty cgroups dead jails left behind: a sweep must never take the
 * cgroup another dl has just made and not yet moved its jail into (it is empty for that
 * moment), or that jail fails to start.
 */

const V1 = "/sys/fs/cgroup/pids";
const V2 = "/sys/fs/cgroup";
const root = existsSync(join(V1, "cgroup.procs"))
  ? V1
  : existsSync(join(V2, "cgroup.subtree_control")) &&
      readFileSync(join(V2, "cgroup.subtree_control"), "utf8").includes("pids")
    ? V2
    : null;
const asRoot = process.platform === "linux" && process.getuid?.() === 0 && root !== null;

describe("pidsCgroup", () => {
  test.skipIf(!asRoot)("a sweep spares the empty cgroup of a live jail that is still starting", async () => {
    const starting = Bun.spawn(["sleep", "30"]);
    const ready = Bun.spawn(["sleep", "30"]);
    // What another dl has done so far: made the cgroup, not yet moved its process in.
    const fresh = join(root!, `dl-jail-${starting.pid}`);
    mkdirSync(fresh);
    // A dead jail's leftover, which the sweep should take.
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    const stale = join(root!, `dl-jail-${dead.pid}`);
    mkdirSync(stale);
    try {
      const remove = pidsCgroup(ready.pid, 64);
      expect(existsSync(fresh)).toBe(true);
      expect(existsSync(stale)).toBe(false);
      expect(readFileSync(join(root!, `dl-jail-${ready.pid}`, "cgroup.procs"), "utf8").trim()).toBe(String(ready.pid));
      ready.kill();
      await ready.exited;
      remove();
    } finally {
      starting.kill();
      ready.kill();
      for (const d of [fresh, stale]) if (existsSync(d)) rmdirSync(d);
    }
  });
});
