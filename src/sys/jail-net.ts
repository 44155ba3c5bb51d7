import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, statSync, watch, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DlError, describeError } from "../errors.ts";
import { pidsCgroup } from "./jail-pids.ts";
import { jailNamespaces } from "./namespaces.ts";

/**
 * What dl does between bwrap creating the jail's namespaces and the jailed command
 * starting. bwrap (started with `--info-fd JAIL_INFO_FD --block-fd JAIL_BLOCK_FD`) writes
 * the pid of the jail's first process, then waits. Meanwhile dl attaches:
 * - the network forwarder, pasta, to the jail's own network namespace: outbound traffic
 *   goes through it, while the host's abstract UNIX sockets and loopback services stay
 *   out of reach (the gateway is not mapped to the host, no port goes to the host);
 * - the process limit: a pids cgroup (as root, whose processes RLIMIT_NPROC never
 *   counts) or RLIMIT_NPROC on the jail's first process (counted per user namespace).
 * Then one byte on the block fd lets the command run. Any failure leaves the jail blocked
 * and the caller kills it: nothing runs without its network and its limit.
 */

export const JAIL_INFO_FD = 3;
export const JAIL_BLOCK_FD = 4;

const ATTACH_TIMEOUT_MS = 15_000;
/** Where the helpers (setpriv, prlimit: util-linux) are looked up; never the job's PATH. */
const SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";

function tool(name: string): string {
  const bin = Bun.which(name, { PATH: SYSTEM_PATH });
  if (!bin) throw new DlError("jail_unavailable", `${name} (util-linux) not found in ${SYSTEM_PATH}`);
  return bin;
}
export const INSTALL_PASTA =
  "install passt (the pasta forwarder): apt-get install passt (Debian/Ubuntu) or dnf install passt (Fedora)";

export interface JailNet {
  /** pasta's absolute path. */
  forwarder: string;
  /** Most processes the jail may run at once. */
  maxProcs: number;
}

export interface JailAttachment {
  /** Why the jail could not be set up (it is still blocked: kill it; nothing ran); null when it runs. */
  failed: string | null;
  /** bwrap ended before it reported its pid: it has said why on its own stderr. */
  ended?: boolean;
  /** Stops the forwarder and removes the limit's cgroup; call once the jail has ended. */
  release(): void;
}

async function childPid(infoFd: number): Promise<number> {
  let text = "";
  // Bun's pipes are non-blocking: a node fs stream on one fails with EAGAIN.
  const reader = Bun.file(infoFd).stream().getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      try {
        const pid = (JSON.parse(text) as { "child-pid"?: unknown })["child-pid"];
        if (typeof pid === "number" && pid > 0) return pid;
      } catch {
        // not all of it yet
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  throw new DlError("jail_unavailable", "bwrap ended before it reported the jail's pid", { ended: true });
}

async function run(argv: string[]): Promise<void> {
  const p = Bun.spawn({ cmd: argv, stdin: "ignore", stdout: "ignore", stderr: "pipe", env: {} });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) {
    const why =
      err
        .replace(/[\p{Cc}\p{Cf}]+/gu, " ")
        .trim()
        .slice(0, 200) || `exit ${code}`;
    throw new DlError("jail_unavailable", `${argv[0]} failed: ${why}`);
  }
}

const TUN = "/dev/net/tun";

/**
 * dl's own look at the device pasta needs, for a pasta that failed: its words ("Failed to
 * open tun socket in namespace") name neither the device nor why, and the fix differs
 * (a missing device is created, a closed one's mode is changed). Null when it opens.
 */
function tunProblem(): string | null {
  try {
    closeSync(openSync(TUN, constants.O_RDWR | constants.O_NONBLOCK));
    return null;
  } catch (e) {
    const code = String((e as NodeJS.ErrnoException).code ?? "error");
    if (code === "ENOENT" || code === "ENODEV" || code === "ENXIO") return `${TUN}: no such file or device (${code})`;
    let mode = "";
    try {
      mode = `, mode 0${(statSync(TUN).mode & 0o777).toString(8)}`;
    } catch {
      // the mode is a detail
    }
    return `${TUN}: this user cannot open it (${code}${mode})`;
  }
}

/** Resolves once `file` in `dir` holds a pid (pasta writes it when the namespace is configured). */
function pidWritten(dir: string, file: string): { done: Promise<void>; stop(): void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  const check = () => {
    try {
      if (Number.parseInt(readFileSync(join(dir, file), "utf8"), 10) > 0) resolve();
    } catch {
      // not written yet
    }
  };
  const watcher = watch(dir, check);
  check();
  return { done: promise, stop: () => watcher.close() };
}

/**
 * pasta in the foreground, as dl's own child with a parent-death signal: it ends with
 * the job (release) and also when dl is killed, so no forwarder outlives its jail. Ready
 * once its pid file is written, which it does after configuring the namespace.
 */
function startForwarder(bin: string, pid: number, dir: string): { proc: Bun.Subprocess; ready: Promise<void> } {
  // As root, pasta joins only the network namespace, from outside (in the jail's user
  // namespace root's uid is not mapped, so pasta could not keep it). Otherwise it joins
  // the user namespace that OWNS the jail's network namespace: bwrap moves the child
  // into a nested user namespace after reporting its pid, so the child's own is the
  // wrong one (18 of 20 jails started together failed with it). Both namespaces are
  // handed over as open descriptors (fds 3 and 4 of pasta), never as paths under dl's
  // /proc, which a non-dumpable dl keeps closed to its own children.
  const root = process.getuid?.() === 0;
  const ns = root ? null : jailNamespaces(pid);
  const target = root
    ? ["--runas", "0", "--netns", `/proc/${pid}/ns/net`]
    : ["--userns", "/proc/self/fd/3", "--netns", "/proc/self/fd/4"];
  const ready = pidWritten(dir, "pasta.pid");
  const p = Bun.spawn({
    cmd: [
      ...[tool("setpriv"), "--pdeathsig", "KILL", bin, "--foreground", "--config-net", "--quiet"],
      // No port of the host reachable from the jail, none of the jail's from the host, and
      // the gateway address stays the gateway (pasta maps it to the host's loopback by default).
      ...["-t", "none", "-u", "none", "-T", "none", "-U", "none", "--no-map-gw"],
      ...["--pid", join(dir, "pasta.pid"), ...target],
    ],
    stdio: ns ? ["ignore", "ignore", "pipe", ns.user, ns.net] : ["ignore", "ignore", "pipe"],
    env: {},
  });
  if (ns) ns.close();
  const exited = p.exited.then(async (code) => {
    const why = (await new Response(p.stderr).text())
      // pasta's note that it could not also log to syslog is no reason: the line after it is.
      .replace(/^Failed to send \d+ bytes to syslog\s*$/gim, "")
      .replace(/[\p{Cc}\p{Cf}]+/gu, " ")
      .trim()
      .slice(0, 200);
    const tun = /\btun\b/i.test(why) ? tunProblem() : null;
    throw new DlError("jail_unavailable", `pasta failed: ${why || `exit ${code}`}${tun ? ` (${tun})` : ""}`);
  });
  return { proc: p, ready: Promise.race([ready.done, exited]).finally(() => ready.stop()) };
}

async function limitProcs(pid: number, max: number): Promise<() => void> {
  if (process.getuid?.() === 0) return pidsCgroup(pid, max);
  await run([tool("prlimit"), `--pid=${pid}`, `--nproc=${max}:${max}`]);
  return () => {};
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DlError("jail_unavailable", `the jail did not start within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * A private folder for pasta's pid file, in TMPDIR. A TMPDIR this user cannot write is a
 * jail that cannot start (named as such, with its fix), not a crash of whoever asked.
 */
function pidFileDir(): string {
  const base = tmpdir();
  try {
    return mkdtempSync(join(base, "dl-pasta-"));
  } catch (e) {
    const code = String((e as NodeJS.ErrnoException).code ?? "error").slice(0, 20);
    throw new DlError("jail_unavailable", `cannot make a folder for pasta's pid file in TMPDIR ${base} (${code})`);
  }
}

/** Attaches forwarder and limit to a jail waiting on `blockFd`, then lets it run. Never throws. */

export async function attachJail(infoFd: number, blockFd: number, net: JailNet): Promise<JailAttachment> {
  const undo: (() => void)[] = [];
  const release = () => {
    for (const u of undo.splice(0).reverse()) {
      try {
        u();
      } catch {
        // best effort: the jail is gone either way
      }
    }
  };
  try {
    const dir = pidFileDir();
    undo.push(() => rmSync(dir, { recursive: true, force: true }));
    const pid = await withTimeout(childPid(infoFd), ATTACH_TIMEOUT_MS);
    undo.push(await limitProcs(pid, net.maxProcs));
    const forwarder = startForwarder(net.forwarder, pid, dir);
    undo.push(() => forwarder.proc.kill("SIGTERM"));
    await withTimeout(forwarder.ready, ATTACH_TIMEOUT_MS);
    // The pid file has done its job; gone now, nothing is left behind if dl is killed.
    rmSync(dir, { recursive: true, force: true });
    writeSync(blockFd, "1");
    return { failed: null, release };
  } catch (e) {
    const ended = e instanceof DlError && e.data.ended === true;
    return { failed: describeError(e), ended, release };
  }
}
