import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { type Identity, identityNames, makeIdentity } from "../helpers/run-as.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * The jail as an ordinary user (the normal case on a workstation): 20 jails one at a time
 * and 20 at once must all start. Run as root (CI), the test makes a user with useradd and
 * runs it with /dev/net/tun at the mode distributions ship (0666), bound over the device in
 * a mount namespace of its own (test/helpers/run-as.ts), so the machine's device and the
 * tests running beside it are untouched; not root, it runs as itself. Before pasta joined
 * the user namespace that owns the jail's network namespace, 0 to 2 of 20 started together
 * here ("Couldn't switch to pasta namespaces").
 */

const who = identityNames().includes("user") ? "user" : "self";
let id: Identity;

beforeAll(() => {
  if (!skipBwrap) id = makeIdentity(who, "jail-user");
});
afterAll(() => id?.cleanup());

/**
 * The fixture and the bun that runs it, in the identity's own folder: the checkout (and so
 * node_modules' bun) may sit where the user cannot read, as under a 0700 /tmp.
 */
async function runnableAsUser(): Promise<{ bun: string; script: string }> {
  const entry = new URL("../fixture/jail-starts.ts", import.meta.url).pathname;
  const built = await Bun.build({ entrypoints: [entry], target: "bun", outdir: id.base, naming: "jail-starts.js" });
  if (!built.success) throw new Error(`could not bundle ${entry}: ${built.logs.join("; ")}`);
  const bun = join(id.base, "bun");
  copyFileSync(process.execPath, bun);
  chmodSync(bun, 0o755);
  return { bun, script: join(id.base, "jail-starts.js") };
}

test.skipIf(skipBwrap)("as an ordinary user: 20 jails one at a time and 20 at once all start", async () => {
  const { bun, script } = await runnableAsUser();
  const r = Bun.spawnSync(id.argv([bun, script, "20"], { tunMode: 0o666 }), {
    cwd: id.home,
    env: id.env({ PATH: "/usr/bin:/bin" }),
    stdout: "pipe",
    stderr: "pipe",
    timeout: 240_000,
  });
  const line = r.stdout.toString().trim().split("\n").pop() ?? "";
  console.log(`jail starts as an ordinary user (${who}, uid ${id.uid}): ${line}`);
  const figures = JSON.parse(line || "{}") as { sequential?: number; together?: number; failures?: string[] };
  expect(figures.failures ?? [r.stderr.toString().slice(0, 500)]).toEqual([]);
  expect(figures.sequential).toBe(20);
  expect(figures.together).toBe(20);
});
