import { dlopen, FFIType } from "bun:ffi";
import { log } from "../log.ts";

/**
 * Keeps other processes of the same user out of dl's memory and environment.
 *
 * dl holds secrets (DELEGATE_LOCAL_KEY, Bifrost virtual keys) in its environment, and
 * /proc/<pid>/environ and /proc/<pid>/mem are readable by any process of the same uid,
 * which includes every run_bash command and Codex job dl starts. Filtering the children's
 * environment is not enough: a child can read its parent's (`/proc/$PPID/environ`).
 *
 * prctl(PR_SET_DUMPABLE, 0) makes the kernel treat dl like a setuid program: its /proc
 * files belong to root and ptrace-style access needs CAP_SYS_PTRACE. The flag is reset
 * by execve, so the children we spawn are ordinary (dumpable) processes; only dl itself
 * is closed. Side effect: no core dumps of dl, which would hold the same secrets.
 *
 * macOS has no /proc and no such flag; there hardenProcess is a logged no-op.
 */

const PR_SET_DUMPABLE = 4;
const PR_GET_DUMPABLE = 3;

type Prctl = (option: number, a2: number, a3: number, a4: number, a5: number) => number;

function loadPrctl(): Prctl | null {
  // glibc first, then musl (Alpine) names.
  const paths = ["libc.so.6", "libc.so", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`];
  for (const path of paths) {
    try {
      // prctl is variadic in C; the kernel always reads five register-sized arguments,
      // so a fixed five-argument signature passes exactly what it expects.
      const lib = dlopen(path, {
        prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
      });
      return lib.symbols.prctl as unknown as Prctl;
    } catch {
      // next candidate
    }
  }
  return null;
}

/**
 * Linux: marks this process non-dumpable and checks that the kernel agrees. True when dl
 * is now protected; false (with a debug log, never an error) on other systems or when
 * the call is unavailable, so dl still runs, just without this extra wall.
 */
export function hardenProcess(): boolean {
  if (process.platform !== "linux") {
    log.debug(`process hardening: not available on ${process.platform}; skipped`);
    return false;
  }
  try {
    const prctl = loadPrctl();
    if (!prctl) {
      log.debug("process hardening: prctl not found in the C library; skipped");
      return false;
    }
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) !== 0 || prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) !== 0) {
      log.debug("process hardening: prctl(PR_SET_DUMPABLE, 0) did not take effect; skipped");
      return false;
    }
    return true;
  } catch (e) {
    log.debug(`process hardening failed: ${e instanceof Error ? e.message : String(e)}`);
    return false;
  }
}
