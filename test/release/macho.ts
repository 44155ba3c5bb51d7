/**
 * A small Mach-O reader for the release checks: the header of a thin 64-bit
 * little-endian Mach-O file and its load commands — enough to tell the CPU, the file
 * type, the segments and whether an ad-hoc code signature (LC_CODE_SIGNATURE pointing at
 * a code-signature SuperBlob) is present, which Apple Silicon requires of every binary.
 */
import { closeSync, openSync } from "node:fs";
import { readAt } from "./elf.ts";

export const MH_MAGIC_64 = 0xfeedfacf;
export const CPU_TYPE_X86_64 = 0x01000007;
export const CPU_TYPE_ARM64 = 0x0100000c;
export const MH_EXECUTE = 2;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
/** CSMAGIC_EMBEDDED_SIGNATURE, stored big-endian at the start of the signature data. */
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;

export type MachOInfo = {
  magic: number;
  cpuType: number;
  fileType: number;
  segments: Map<string, { offset: number; size: number }>;
  /** The signature data LC_CODE_SIGNATURE points at, when there is one. */
  signature: { offset: number; size: number; magic: number } | undefined;
};

export function readMachO(path: string): MachOInfo {
  const fd = openSync(path, "r");
  try {
    const h = readAt(fd, 0, 32);
    const info: MachOInfo = {
      magic: h.readUInt32LE(0),
      cpuType: h.readInt32LE(4),
      fileType: h.readUInt32LE(12),
      segments: new Map(),
      signature: undefined,
    };
    if (info.magic !== MH_MAGIC_64) return info;
    const cmds = readAt(fd, 32, h.readUInt32LE(20));
    for (let i = 0, at = 0; i < h.readUInt32LE(16); i++) {
      const cmd = cmds.readUInt32LE(at);
      if (cmd === LC_SEGMENT_64) {
        const name = cmds.toString("latin1", at + 8, at + 24).replace(/\0+$/, "");
        info.segments.set(name, {
          offset: Number(cmds.readBigUInt64LE(at + 40)),
          size: Number(cmds.readBigUInt64LE(at + 48)),
        });
      } else if (cmd === LC_CODE_SIGNATURE) {
        const offset = cmds.readUInt32LE(at + 8);
        const size = cmds.readUInt32LE(at + 12);
        info.signature = { offset, size, magic: readAt(fd, offset, 4).readUInt32BE(0) };
      }
      at += cmds.readUInt32LE(at + 4);
    }
    return info;
  } finally {
    closeSync(fd);
  }
}

export { CSMAGIC_EMBEDDED_SIGNATURE };
