/**
 * A small ELF reader for the release checks: enough of a 64-bit little-endian ELF file
 * to name its machine, the loader its PT_INTERP asks for, and where a named section
 * lies. It reads only the headers it needs, never the whole file.
 */
import { closeSync, openSync, readSync } from "node:fs";

export const EM_X86_64 = 62;
export const EM_AARCH64 = 183;
const PT_INTERP = 3;

export type ElfInfo = {
  machine: number;
  /** ET_EXEC (2) or ET_DYN (3). */
  type: number;
  interpreter: string | undefined;
  sections: Map<string, { offset: number; size: number }>;
};

export function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const got = readSync(fd, buf, 0, length, offset);
  if (got !== length) throw new Error(`short read: ${got} of ${length} bytes at ${offset}`);
  return buf;
}

function interpreterOf(fd: number, h: Buffer): string | undefined {
  const phoff = Number(h.readBigUInt64LE(32));
  const size = h.readUInt16LE(54);
  for (let i = 0; i < h.readUInt16LE(56); i++) {
    const ph = readAt(fd, phoff + i * size, size);
    if (ph.readUInt32LE(0) !== PT_INTERP) continue;
    const text = readAt(fd, Number(ph.readBigUInt64LE(8)), Number(ph.readBigUInt64LE(32)));
    return text.toString("latin1").replace(/\0+$/, "");
  }
  return undefined;
}

function sectionsOf(fd: number, h: Buffer): ElfInfo["sections"] {
  const shoff = Number(h.readBigUInt64LE(40));
  const size = h.readUInt16LE(58);
  const count = h.readUInt16LE(60);
  const headers = Array.from({ length: count }, (_, i) => readAt(fd, shoff + i * size, size));
  const names = headers[h.readUInt16LE(62)];
  if (!names) throw new Error("no section-name table");
  const strtab = readAt(fd, Number(names.readBigUInt64LE(24)), Number(names.readBigUInt64LE(32)));
  const sections: ElfInfo["sections"] = new Map();
  for (const sh of headers) {
    const start = sh.readUInt32LE(0);
    const name = strtab.toString("latin1", start, strtab.indexOf(0, start));
    sections.set(name, { offset: Number(sh.readBigUInt64LE(24)), size: Number(sh.readBigUInt64LE(32)) });
  }
  return sections;
}

export function readElf(path: string): ElfInfo {
  const fd = openSync(path, "r");
  try {
    const h = readAt(fd, 0, 64);
    if (h.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${path}: not an ELF file`);
    if (h[4] !== 2 || h[5] !== 1) throw new Error(`${path}: not a 64-bit little-endian ELF file`);
    return {
      type: h.readUInt16LE(16),
      machine: h.readUInt16LE(18),
      interpreter: interpreterOf(fd, h),
      sections: sectionsOf(fd, h),
    };
  } finally {
    closeSync(fd);
  }
}
