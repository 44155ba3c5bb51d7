/**
 * Terminal control sequences, whole (their parameters and payload too, not only ESC):
 * CSI; OSC (a title, a hyperlink) ended by BEL or ST, or never ended; DCS/SOS/PM/APC
 * strings; two-character escapes; and the same introducers in their 8-bit C1 forms.
 */
export const ANSI =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c|$)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)|[\x90\x98\x9e\x9f][^\x1b\x9c]*(?:\x1b\\|\x9c|$)/g;

/**
 * The sequences that colour or erase in place (CSI, 7-bit and 8-bit): what `grep --color`
 * and `ls --color` put inside a word. Each ends at its final byte, so dropping them never
 * takes the text after an unterminated string with it.
 */
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]/g;

/**
 * `text` as a terminal shows it, without its colour codes: `grep --color` prints
 * `sk-ant\e[m\e[K-api03-…`, which the terminal shows as one key, so the key is looked
 * for, and cut, in what is shown.
 */
export function withoutTerminalCodes(text: string): string {
  return /[\x1b\x9b]/.test(text) ? text.replace(CSI, "") : text;
}
