/**
 * Terminal control sequences, whole (their parameters and payload too, not only ESC):
 * CSI; OSC (a title, a hyperlink) ended by BEL or ST, or never ended; DCS/SOS/PM/APC
 * strings; two-character escapes; and the same introducers in their 8-bit C1 forms.
 */
export const ANSI =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c|$)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)|[\x90\x98\x9e\x9f][^\x1b\x9c]*(?:\x1b\\|\x9c|$)/g;

/** Where a terminal sequence may start: ESC, or an 8-bit C1 introducer. */
const INTRODUCER = /[\x1b\x90\x98\x9b\x9d-\x9f]/;

/**
 * `text` as a terminal shows it, without its control sequences: `grep --color` prints
 * `sk-ant\e[m\e[K-api03-…`, which the terminal shows as one key, so the key is looked
 * for, and cut, in what is shown.
 */
export function withoutTerminalCodes(text: string): string {
  return INTRODUCER.test(text) ? text.replace(ANSI, "") : text;
}
