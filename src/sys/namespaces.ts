import { dlopen, FFIType } from "bun:ffi";
import { closeSync, openSync } from "node:fs";
import { DlError } from "../errors.ts";

/**
 * The namespaces of a jail as open descriptors (Linux): its network namespace, and the
 * user namespace that owns it (`ioctl(NS_GET_USERNS)` on the network namespace), which
 * is the one a forwarder must join to configure it. The caller passes both to the
 * forwarder and closes its own copies.
 */

/** _IO(0xb7, 0x1) from linux/nsfs.h. */
const NS_GET_USERNS = 0xb701;

type Ioctl = (fd: number, request: number) => number;
let ioctl: Ioctl | null = null;

function loadIoctl(): Ioctl {
  if (ioctl) return ioctl;
  for (const path of ["libc.so.6", "libc.so", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`]) {
    try {
      const lib = dlopen(path, { ioctl: { args: [FFIType.i32, FFIType.u64], returns: FFIType.i32 } });
      ioctl = lib.symbols.ioctl as unknown as Ioctl;
      return ioctl;
    } catch {
      // next candidate
    }
  }
  throw new DlError("jail_unavailable", "ioctl not found in the C library");
}

export function jailNamespaces(pid: number): { net: number; user: number; close(): void } {
  const net = openSync(`/proc/${pid}/ns/net`, "r");
  const user = loadIoctl()(net, NS_GET_USERNS);
  if (user < 0) {
    closeSync(net);
    throw new DlError("jail_unavailable", "could not find the user namespace that owns the jail's network namespace");
  }
  return {
    net,
    user,
    close() {
      closeSync(user);
      closeSync(net);
    },
  };
}
