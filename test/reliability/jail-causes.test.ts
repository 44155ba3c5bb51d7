import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type Identity, identityNames, makeIdentity, TOOLS } from "../helpers/run-as.ts";
import { until } from "../helpers/until.ts";

/**
 * A jail that cannot start, one cause at a time, through dist/dl as an ordinary user: a
 * Gemini job fails `jail_unavailable` with nothing run, and both its result and `dl
 * status` name the fix for that cause (and not another cause's):
 * - /dev/net/tun 0600 (pasta cannot open it): the device's mode;
 * - no bwrap on PATH: install bubblewrap;
 * - no pasta on PATH: install passt;
 * - user namespaces disabled: the sysctl. Made real without touching the machine: dl runs
 *   in a user namespace of the test's whose `user.max_user_namespaces` leaves room for
 *   none below it (the limit is per user namespace), as `sysctl user.max_user_namespaces=0`
 *   does for a whole host.
 */

const FAKE_AGY = new URL("../fixture/fake-agy.sh", import.meta.url).pathname;
const SYSTEM = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];
const TUN_FIX = "chmod 0666 /dev/net/tun";
const USERNS_FIX = "enable unprivileged user namespaces";
const BWRAP_FIX = "install bubblewrap";
const PASTA_FIX = "install passt";
const FIXES = [TUN_FIX, USERNS_FIX, BWRAP_FIX, PASTA_FIX];

/** An ordinary user: made for the test when it runs as root, else itself. */
const who = identityNames().includes("user") ? "user" : "self";
let user: Identity;
/** The suite's own identity (root, or itself): it starts the user namespace in which dl is an ordinary user (uid 1000). */
let own: Identity;
/** The identity of the cause under test. */
let id: Identity;

/** A PATH folder with every program of the system's but `without` (bwrap or pasta). */
function pathWithout(without: string): string {
  const dir = join(id.base, `path-without-${without}`);
  mkdirSync(dir);
  for (const name of ["sh", "git", "env", "cat", "bwrap", "pasta", "passt", "passt.avx2"]) {
    if (name.startsWith(without)) continue;
    const bin = SYSTEM.map((d) => join(d, name)).find((p) => existsSync(p));
    if (bin) symlinkSync(bin, join(dir, name));
  }
  return dir;
}

/** Runs `argv` inside a user namespace below which no user namespace can be made. */
function withoutUserNamespaces(argv: string[]): string[] {
  const inner = [TOOLS.unshare, "-U", "--map-user=1000", "--map-group=1000", "--", ...argv];
  const script = 'echo 1 > /proc/sys/user/max_user_namespaces && exec "$@"';
  return [TOOLS.unshare, "-U", "-r", "--", "/bin/sh", "-c", script, "sh", ...inner];
}

interface Cause {
  name: string;
  fix: string;
  /** Whose folder and dl: the user's, or (in the user namespace) the suite's own. */
  as: () => Identity;
  /** The command that runs dl (`dl serve`, `dl status`). */
  argv(dl: string[]): string[];
  path?: () => string;
  skip?: boolean;
}

const CAUSES: Cause[] = [
  {
    name: "/dev/net/tun 0600",
    fix: TUN_FIX,
    as: () => user,
    argv: (dl) => user.argv(dl, { tunMode: 0o600 }),
    skip: who !== "user",
  },
  {
    name: "no bwrap on PATH",
    fix: BWRAP_FIX,
    as: () => user,
    argv: (dl) => user.argv(dl),
    path: () => pathWithout("bwrap"),
  },
  {
    name: "no pasta on PATH",
    fix: PASTA_FIX,
    as: () => user,
    argv: (dl) => user.argv(dl),
    path: () => pathWithout("pas"),
  },
  { name: "user namespaces disabled", fix: USERNS_FIX, as: () => own, argv: (dl) => withoutUserNamespaces(dl) },
];

function envFor(c: Cause): Record<string, string> {
  return id.env({
    PATH: c.path ? c.path() : SYSTEM.join(":"),
    DELEGATE_AGY_BIN: join(id.base, "bin/agy"),
    DELEGATE_GEMINI_ALLOW_DANGER: "1",
  });
}

async function geminiJob(c: Cause, env: Record<string, string>): Promise<Record<string, unknown>> {
  const [command, ...args] = c.argv([id.dl, "serve"]);
  const transport = new StdioClientTransport({ command: command!, args, env, cwd: id.base, stderr: "pipe" });
  const client = new Client({ name: "jail-causes", version: "1.0.0" });
  await client.connect(transport);
  try {
    const workdir = join(id.base, `work-${c.name.replace(/\W+/g, "-")}`);
    mkdirSync(workdir);
    id.own(workdir);
    const sub = (await client.callTool(
      { name: "submit_gemini", arguments: { tasks: [{ task: "WRITE=ran.txt say hi", workdir }] } },
      { timeout: 60_000 },
    )) as { structuredContent?: { jobs?: { id: string }[] } };
    const jobId = sub.structuredContent!.jobs![0]!.id;
    const job = await until(
      async () => {
        const r = (await client.callTool({ name: "poll_gemini", arguments: { ids: [jobId] } })) as {
          structuredContent?: { jobs?: Record<string, unknown>[] };
        };
        const j = r.structuredContent?.jobs?.[0];
        return j && !["queued", "running"].includes(String(j.status)) ? j : null;
      },
      `job ${jobId} to end`,
      60_000,
    );
    expect(existsSync(join(workdir, "ran.txt"))).toBe(false);
    return job;
  } finally {
    await client.close();
  }
}

function status(c: Cause, env: Record<string, string>): string {
  const r = Bun.spawnSync(c.argv([id.dl, "status"]), { env, cwd: id.base, stdout: "pipe", stderr: "pipe" });
  return r.stdout.toString() + r.stderr.toString();
}

beforeAll(() => {
  user = makeIdentity(who, "jail-causes");
  own = who === "user" ? makeIdentity(identityNames()[0]!, "jail-causes-ns") : user;
  for (const i of new Set([user, own])) {
    mkdirSync(join(i.base, "bin"));
    copyFileSync(FAKE_AGY, join(i.base, "bin/agy"));
    i.own(i.base);
  }
});
afterAll(() => {
  user?.cleanup();
  if (own !== user) own?.cleanup();
});

describe.skipIf(process.platform !== "linux")("jail_unavailable names the fix for its cause, through dist/dl", () => {
  for (const c of CAUSES) {
    test.skipIf(c.skip === true)(`${c.name}: the job fails closed and it and dl status name ${c.fix}`, async () => {
      id = c.as();
      const env = envFor(c);
      const job = await geminiJob(c, env);
      const said = JSON.stringify(job);
      expect(job.status).toBe("failed");
      expect(job.failure_kind).toBe("jail_unavailable");
      expect(said).toContain(c.fix);
      expect(said).not.toContain("to syslog"); // pasta's note that it could not log there is no cause
      for (const other of FIXES.filter((f) => f !== c.fix)) expect(said).not.toContain(other);
      const shown = status(c, env);
      console.log(`${c.name}: ${/jail: .*/.exec(shown)?.[0]}`);
      expect(shown).toMatch(/jail: UNAVAILABLE/);
      expect(shown).toContain(c.fix);
      for (const other of FIXES.filter((f) => f !== c.fix)) expect(shown).not.toContain(other);
    });
  }
});
