/**
 * A git config file as git reads its values (config.c's parse_value): what a key's value
 * hands to `sh -c` is not the file's bytes. `nbstripout --install` stores
 * `clean = \"/usr/bin/python3\" -m nbstripout`: git strips the escapes, so the filter
 * runs `"/usr/bin/python3" -m nbstripout`; read raw, the first word was
 * `/usr/bin/python3\`, no interpreter, and the module it imports went unnamed.
 *
 * Each `key = value` line comes out as `key = <value as git parsed it>`: double quotes
 * removed (they only keep white space and `;`/`#`), `\"`, `\\`, `\t`, `\n` and `\b`
 * decoded, a trailing `\` joining the next line, and a comment (`;` or `#` outside quotes)
 * dropped. Section headers and lines without a value are kept as they are.
 */
export function gitConfigText(text: string): string {
  return joinedLines(text)
    .map((line) => {
      const m = /^(\s*[A-Za-z][\w-]*\s*=)(.*)$/.exec(line);
      return m ? `${m[1]} ${parsedValue(m[2]!)}` : line;
    })
    .join("\n");
}

/** The file's lines, each `\` at a line's end (outside a comment) joined with the next line. */
function joinedLines(text: string): string[] {
  const out: string[] = [];
  let pending = "";
  for (const line of text.split(/\r?\n/)) {
    const trailing = /(\\+)$/.exec(line)?.[1]?.length ?? 0;
    if (trailing % 2 === 1) {
      pending += line.slice(0, -1);
      continue;
    }
    out.push(pending + line);
    pending = "";
  }
  if (pending) out.push(pending);
  return out;
}

const ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", b: "", '"': '"', "\\": "\\" };

/** One value as git parses it: quotes removed, escapes decoded, a comment outside quotes dropped. */
function parsedValue(raw: string): string {
  let out = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === "\\" && i + 1 < raw.length) {
      const next = raw[++i]!;
      out += ESCAPES[next] ?? next;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ";" || c === "#")) break;
    else out += c;
  }
  return out.trim();
}
